/**
 * SASL and authorization on the wire (issue 19): the same raw requests, built
 * with the project's own codecs, to the gateway and to Apache Kafka secured
 * alike (test/support/secured-brokers.ts: users admin, alice, bob and carol,
 * PLAIN and SCRAM and OAUTHBEARER on SASL_PLAINTEXT, StandardAuthorizer with
 * admin a super user, sessions of SESSION_MS). What each answers, and whether
 * it then closes the connection, is the observation.
 *
 * SASL: SaslHandshake with each enabled mechanism and with one that is not,
 * SaslAuthenticate right and wrong for PLAIN, SCRAM (a whole exchange, the
 * client side written here) and OAUTHBEARER, the v0 handshake's bare tokens,
 * requests out of order (SaslAuthenticate first, Metadata first, a second
 * handshake), the session lifetime and what happens after it, and
 * re-authentication as someone else. Authorization: bob, who holds no ACL,
 * asks for what alice's ACLs cover and for cluster operations, and gets
 * TOPIC_, GROUP_, CLUSTER_ and TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import { RawConnection, frame } from '../../support/raw-connection.js';
import { SECURED_USERS, type SecuredBroker, type SecurityFixture } from '../../support/secured-brokers.js';
import { code, type Normaliser, type Observation } from '../harness.js';
import { V } from '../observe.js';

/** connections.max.reauth.ms on both brokers of the security suite. */
export const SESSION_MS = 3_000;

export interface SecurityScenarioContext {
  broker: SecuredBroker;
  fixture: SecurityFixture;
  normalise: Normaliser;
}

export interface SecurityScenario {
  name: string;
  run(ctx: SecurityScenarioContext): Promise<Observation>;
}

const HANDSHAKE_V = 1;
const AUTHENTICATE_V = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function saslPlaintext(ctx: SecurityScenarioContext): Promise<RawConnection> {
  return RawConnection.open(ctx.broker.port.SASL_PLAINTEXT);
}

/** Whether the broker closes the connection within a moment (it does so right after a refusal, or not at all). */
async function closesSoon(raw: RawConnection, ms = 1_500): Promise<boolean> {
  return Promise.race([raw.closed.then(() => true), sleep(ms).then(() => false)]);
}

/** The answer to a request, or that the connection closed instead of answering. */
async function answerOrClose(raw: RawConnection, apiKey: number, version: number, body: Message): Promise<Message | 'closed without an answer'> {
  try {
    return await raw.request(apiKey, version, body, 5_000);
  } catch (e) {
    if (/closed before/.test((e as Error).message)) return 'closed without an answer';
    throw e;
  }
}

function authenticateAnswer(a: Message | 'closed without an answer'): unknown {
  if (typeof a === 'string') return a;
  return { error: code(a.errorCode as number), errorMessage: a.errorMessage, authBytes: (a.authBytes as Buffer).toString('utf8'), sessionLifetimeMs: Number(a.sessionLifetimeMs) };
}

const plainToken = (user: string, password: string) => Buffer.from(`\u0000${user}\u0000${password}`);

/**
 * A connection authenticated with PLAIN (SaslHandshake v1, SaslAuthenticate
 * v2) that re-authenticates, as clients do, once half its session is gone:
 * the suite's sessions are short, and a request on an expired one closes the
 * connection on both brokers.
 */
class Session {
  private renewAtMs = 0;

  private constructor(
    private readonly raw: RawConnection,
    private readonly user: keyof typeof SECURED_USERS,
  ) {}

  static async open(ctx: SecurityScenarioContext, user: keyof typeof SECURED_USERS): Promise<Session> {
    const session = new Session(await saslPlaintext(ctx), user);
    await session.authenticate();
    return session;
  }

  private async authenticate(): Promise<void> {
    const startedAt = Date.now();
    await this.raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
    const auth = await this.raw.request(ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken(this.user, SECURED_USERS[this.user]) });
    if (auth.errorCode !== 0) throw new Error(`${this.user} could not authenticate: ${auth.errorCode} ${auth.errorMessage}`);
    const lifetime = Number(auth.sessionLifetimeMs);
    this.renewAtMs = lifetime > 0 ? startedAt + lifetime / 2 : Infinity;
  }

  async request(apiKey: number, version: number, body: Message, timeoutMs?: number): Promise<Message> {
    if (Date.now() >= this.renewAtMs) await this.authenticate();
    return this.raw.request(apiKey, version, body, timeoutMs);
  }

  destroy(): void {
    this.raw.destroy();
  }
}

export const authenticatedAs = (ctx: SecurityScenarioContext, user: keyof typeof SECURED_USERS): Promise<Session> => Session.open(ctx, user);

// ─── SCRAM, the client side (RFC 5802) ───────────────────────────────────────

interface ScramRun {
  serverFirst: unknown;
  final: unknown;
  closed: boolean;
}

/** A whole SCRAM exchange over SaslAuthenticate; the server's first message is observed by its shape only (its nonce and salt are random). */
async function scramExchange(ctx: SecurityScenarioContext, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', user: string, password: string): Promise<ScramRun> {
  const raw = await saslPlaintext(ctx);
  try {
    return await scramOn(raw, mechanism, user, password);
  } finally {
    raw.destroy();
  }
}

/** The SCRAM exchange on a connection, from its SaslHandshake. */
async function scramOn(raw: RawConnection, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', user: string, password: string): Promise<ScramRun & { handshake: string }> {
  const hash = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
  {
    const handshake = await answerOrClose(raw, ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism });
    if (typeof handshake === 'string' || handshake.errorCode !== 0) {
      return { handshake: typeof handshake === 'string' ? handshake : code(handshake.errorCode as number), serverFirst: null, final: null, closed: await closesSoon(raw) };
    }
    const clientNonce = randomBytes(18).toString('base64');
    const clientFirstBare = `n=${user},r=${clientNonce}`;
    const first = await answerOrClose(raw, ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: Buffer.from(`n,,${clientFirstBare}`) });
    if (typeof first === 'string' || first.errorCode !== 0) return { handshake: 'NONE', serverFirst: authenticateAnswer(first), final: null, closed: await closesSoon(raw) };
    const serverFirst = (first.authBytes as Buffer).toString('utf8');
    const fields = Object.fromEntries(serverFirst.split(',').map((kv) => [kv[0], kv.slice(2)]));
    const salt = Buffer.from(fields.s!, 'base64');
    const iterations = Number(fields.i);
    const withoutProof = `c=biws,r=${fields.r}`;
    const salted = pbkdf2Sync(password, salt, iterations, hash === 'sha256' ? 32 : 64, hash);
    const clientKey = createHmac(hash, salted).update('Client Key').digest();
    const storedKey = createHash(hash).update(clientKey).digest();
    const signature = createHmac(hash, storedKey).update(`${clientFirstBare},${serverFirst},${withoutProof}`).digest();
    const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
    const final = await answerOrClose(raw, ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: Buffer.from(`${withoutProof},p=${proof.toString('base64')}`) });
    const finalSeen = authenticateAnswer(final) as Record<string, unknown> | string;
    // A server-final message carries a signature computed from random nonces: its shape only.
    if (typeof finalSeen === 'object' && typeof finalSeen.authBytes === 'string') finalSeen.authBytes = finalSeen.authBytes.replace(/^v=.+$/, 'v=<server signature>');
    return {
      handshake: 'NONE',
      serverFirst: {
        error: code(first.errorCode as number),
        nonceExtendsOurs: fields.r!.startsWith(clientNonce) && fields.r!.length > clientNonce.length,
        saltBytes: salt.length > 0 ? '<some>' : 0,
        iterations,
        sessionLifetimeMs: Number(first.sessionLifetimeMs),
      },
      final: finalSeen,
      closed: await closesSoon(raw),
    };
  }
}

// ─── SASL scenarios ──────────────────────────────────────────────────────────

const saslScenarios: SecurityScenario[] = [
  {
    name: 'SaslHandshake: each enabled mechanism, and one that is not',
    async run(ctx) {
      const out: Observation = {};
      for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER', 'GSSAPI', 'plain']) {
        for (const version of [0, 1]) {
          const raw = await saslPlaintext(ctx);
          try {
            const a = await raw.request(ApiKey.SaslHandshake, version, { mechanism });
            out[`${mechanism} v${version}`] = { error: code(a.errorCode as number), mechanisms: a.mechanisms, closed: await closesSoon(raw, a.errorCode === 0 ? 300 : 1_500) };
          } finally {
            raw.destroy();
          }
        }
      }
      return out;
    },
  },
  {
    name: 'PLAIN: right and wrong passwords, an unknown user, a malformed token',
    async run(ctx) {
      const out: Observation = {};
      for (const [what, token] of [
        ['right', plainToken('alice', SECURED_USERS.alice)],
        ['wrong password', plainToken('alice', 'not-alices')],
        ['unknown user', plainToken('mallory', 'whatever')],
        ['authorization id of another user', Buffer.from(`bob\u0000alice\u0000${SECURED_USERS.alice}`)],
        ['no separators', Buffer.from('alice')],
      ] as const) {
        const raw = await saslPlaintext(ctx);
        try {
          await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
          const a = await answerOrClose(raw, ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: token });
          out[what] = { answer: authenticateAnswer(a), closed: await closesSoon(raw) };
        } finally {
          raw.destroy();
        }
      }
      return out;
    },
  },
  {
    name: 'SCRAM: a whole exchange right and wrong, and an unknown user',
    async run(ctx) {
      const out: Observation = {};
      for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
        out[`${mechanism} right`] = await scramExchange(ctx, mechanism, 'alice', SECURED_USERS.alice);
        out[`${mechanism} wrong password`] = await scramExchange(ctx, mechanism, 'alice', 'not-alices');
        out[`${mechanism} unknown user`] = await scramExchange(ctx, mechanism, 'mallory', 'whatever');
      }
      return out;
    },
  },
  {
    name: 'OAUTHBEARER: a good token, one signed by another key, an expired one',
    async run(ctx) {
      const out: Observation = {};
      const stranger = (() => {
        const good = ctx.fixture.token('alice');
        const [h, c] = good.split('.');
        return `${h}.${c}.${randomBytes(256).toString('base64url')}`;
      })();
      const expired = (() => {
        const [h, , s] = ctx.fixture.token('alice').split('.');
        // Claims swapped for expired ones: the signature no longer fits, so both checks must refuse it.
        const now = Math.floor(Date.now() / 1000);
        return `${h}.${Buffer.from(JSON.stringify({ sub: 'alice', aud: 'queen', iss: 'https://issuer.test', iat: now - 600, exp: now - 300 })).toString('base64url')}.${s}`;
      })();
      for (const [what, token] of [
        ['good, 20 s to live', ctx.fixture.token('alice', 20)],
        ['signed by another key', stranger],
        ['expired', expired],
      ] as const) {
        const raw = await saslPlaintext(ctx);
        try {
          await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'OAUTHBEARER' });
          const first = await answerOrClose(raw, ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: Buffer.from(`n,,\u0001auth=Bearer ${token}\u0001\u0001`) });
          const seen: Record<string, unknown> = { first: authenticateAnswer(first) };
          const firstSeen = seen.first as Record<string, unknown>;
          // A good token's session: the shorter of the token's life and the listener's limit.
          if (typeof firstSeen === 'object' && firstSeen.error === 'NONE' && (firstSeen.authBytes as string) === '') firstSeen.sessionLifetimeMs = Number(firstSeen.sessionLifetimeMs) <= SESSION_MS ? `<= ${SESSION_MS}` : firstSeen.sessionLifetimeMs;
          if (typeof first !== 'string' && first.errorCode === 0 && (first.authBytes as Buffer).length > 0) {
            seen.final = authenticateAnswer(await answerOrClose(raw, ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: Buffer.from('\u0001') }));
          }
          seen.closed = await closesSoon(raw);
          out[what] = seen;
        } finally {
          raw.destroy();
        }
      }
      return out;
    },
  },
  {
    name: 'SaslHandshake v0: bare tokens, right and wrong',
    async run(ctx) {
      const out: Observation = {};
      for (const [what, password] of [['right', SECURED_USERS.alice], ['wrong', 'not-alices']] as const) {
        const raw = await saslPlaintext(ctx);
        try {
          await raw.request(ApiKey.SaslHandshake, 0, { mechanism: 'PLAIN' });
          raw.write(frame(plainToken('alice', password)));
          let reply: unknown;
          try {
            reply = { bytes: (await raw.readFrame(5_000)).length };
          } catch {
            reply = 'closed without an answer';
          }
          const after = reply === 'closed without an answer' ? reply : await answerOrClose(raw, ApiKey.Metadata, V.metadata, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
          out[what] = { reply, metadataAfter: typeof after === 'string' ? after : { brokers: (after.brokers as unknown[]).length }, closed: await closesSoon(raw) };
        } finally {
          raw.destroy();
        }
      }
      return out;
    },
  },
  {
    name: 'requests out of order: before the handshake, before authenticating, a second handshake, on the PLAINTEXT listener',
    async run(ctx) {
      const out: Observation = {};
      const metadata = { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };
      let raw = await saslPlaintext(ctx);
      const authFirst = await answerOrClose(raw, ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken('alice', SECURED_USERS.alice) });
      out.saslAuthenticateBeforeHandshake = { answer: authenticateAnswer(authFirst), closed: await closesSoon(raw) };
      raw.destroy();

      raw = await saslPlaintext(ctx);
      const early = await answerOrClose(raw, ApiKey.Metadata, V.metadata, metadata);
      out.metadataBeforeHandshake = { answer: typeof early === 'string' ? early : 'answered', closed: await closesSoon(raw) };
      raw.destroy();

      raw = await saslPlaintext(ctx);
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      const between = await answerOrClose(raw, ApiKey.Metadata, V.metadata, metadata);
      out.metadataBetweenHandshakeAndAuthenticate = { answer: typeof between === 'string' ? between : 'answered', closed: await closesSoon(raw) };
      raw.destroy();

      raw = await saslPlaintext(ctx);
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      const twice = await answerOrClose(raw, ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      out.secondHandshakeBeforeAuthenticating = { answer: typeof twice === 'string' ? twice : { error: code(twice.errorCode as number) }, closed: await closesSoon(raw) };
      raw.destroy();

      raw = await RawConnection.open(ctx.broker.port.PLAINTEXT);
      const onPlain = await answerOrClose(raw, ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      out.handshakeOnPlaintext = { answer: typeof onPlain === 'string' ? onPlain : { error: code(onPlain.errorCode as number), mechanisms: onPlain.mechanisms }, closed: await closesSoon(raw) };
      raw.destroy();
      return out;
    },
  },
  {
    name: 'sessions: the lifetime answered, re-authentication, a request after expiry, another principal',
    async run(ctx) {
      const out: Observation = {};
      const metadata = { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };
      let raw = await saslPlaintext(ctx);
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      const v0 = await raw.request(ApiKey.SaslAuthenticate, 0, { authBytes: plainToken('alice', SECURED_USERS.alice) });
      out.v0Answer = { error: code(v0.errorCode as number) };
      raw.destroy();

      raw = await saslPlaintext(ctx);
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      const first = await raw.request(ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken('alice', SECURED_USERS.alice) });
      out.sessionLifetimeMs = Number(first.sessionLifetimeMs);
      // Re-authenticating as the same user with another mechanism.
      out.reauthenticationWithAnotherMechanism = await scramOn(raw, 'SCRAM-SHA-256', 'alice', SECURED_USERS.alice);
      raw.destroy();

      raw = await saslPlaintext(ctx);
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      await raw.request(ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken('alice', SECURED_USERS.alice) });
      const handshake = await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      const renewed = await raw.request(ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken('alice', SECURED_USERS.alice) });
      out.reauthentication = { handshake: code(handshake.errorCode as number), answer: authenticateAnswer(renewed) };
      const served = await answerOrClose(raw, ApiKey.Metadata, V.metadata, metadata);
      out.servedAfterReauthentication = typeof served === 'string' ? served : 'answered';
      raw.destroy();

      raw = await saslPlaintext(ctx);
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      await raw.request(ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken('alice', SECURED_USERS.alice) });
      await sleep(SESSION_MS + 500);
      const late = await answerOrClose(raw, ApiKey.Metadata, V.metadata, metadata);
      out.requestAfterExpiry = { answer: typeof late === 'string' ? late : 'answered', closed: await closesSoon(raw) };
      raw.destroy();

      raw = await saslPlaintext(ctx);
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      await raw.request(ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken('alice', SECURED_USERS.alice) });
      await raw.request(ApiKey.SaslHandshake, HANDSHAKE_V, { mechanism: 'PLAIN' });
      const other = await answerOrClose(raw, ApiKey.SaslAuthenticate, AUTHENTICATE_V, { authBytes: plainToken('bob', SECURED_USERS.bob) });
      out.reauthenticationAsAnotherPrincipal = { answer: authenticateAnswer(other), closed: await closesSoon(raw) };
      raw.destroy();
      return out;
    },
  },
];

// ─── authorization ───────────────────────────────────────────────────────────

/** alice's topic and group, made by admin, with ALL for alice on them; bob has nothing. */
async function aliceResources(ctx: SecurityScenarioContext, tag: string): Promise<{ topic: string; group: string }> {
  const topic = `alice-${tag}`;
  const group = `alice-g-${tag}`;
  const admin = await authenticatedAs(ctx, 'admin');
  try {
    await admin.request(ApiKey.CreateTopics, 7, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
    const acls = await admin.request(ApiKey.CreateAcls, 3, {
      creations: [2, 3].map((resourceType) => ({ resourceType, resourceName: resourceType === 2 ? topic : group, resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 2, permissionType: 3 })),
    });
    if ((acls.results as Message[]).some((r) => r.errorCode !== 0)) throw new Error(`CreateAcls as admin failed: ${JSON.stringify(acls.results)}`);
  } finally {
    admin.destroy();
  }
  return { topic, group };
}

const authorizationScenarios: SecurityScenario[] = [
  {
    name: 'authorization: bob without ACLs against alice’s topic, group and transactions, and the cluster',
    async run(ctx) {
      const { topic, group } = await aliceResources(ctx, 'authz');
      const bob = await authenticatedAs(ctx, 'bob');
      try {
        const out: Observation = {};
        const md = await bob.request(ApiKey.Metadata, V.metadata, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
        out.metadataOfAlicesTopic = (md.topics as Message[]).map((t) => ({ name: t.name, error: code(t.errorCode as number), partitions: (t.partitions as unknown[]).length, topicId: ctx.normalise.uuid(t.topicId) }));
        const all = await bob.request(ApiKey.Metadata, V.metadata, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
        out.allTopicsShowAlices = (all.topics as Message[]).some((t) => t.name === topic);
        const autoCreate = await bob.request(ApiKey.Metadata, V.metadata, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: 'bob-new' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
        out.metadataAutoCreate = (autoCreate.topics as Message[]).map((t) => ({ name: t.name, error: code(t.errorCode as number) }));

        const batch = buildBatch({ records: [{ key: null, value: Buffer.from('from bob'), headers: [] }] });
        const produced = await bob.request(ApiKey.Produce, V.produce, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] });
        const partition = (produced.responses as { partitionResponses: Message[] }[])[0]!.partitionResponses[0]!;
        out.produce = { error: code(partition.errorCode as number), baseOffset: Number(partition.baseOffset) };

        const fetched = await bob.request(ApiKey.Fetch, V.fetch, {
          replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
          forgottenTopicsData: [], rackId: '',
        });
        const fetchedPartition = (fetched.responses as { partitions: Message[] }[])[0]!.partitions[0]!;
        out.fetch = { topLevel: code(fetched.errorCode as number), error: code(fetchedPartition.errorCode as number), bytes: (fetchedPartition.records as Buffer | null)?.length ?? 0 };

        const coordinator = async (keyType: number, key: string) => {
          const a = await bob.request(ApiKey.FindCoordinator, 4, { keyType, coordinatorKeys: [key] });
          return code((a.coordinators as Message[])[0]!.errorCode as number);
        };
        out.findGroupCoordinator = await coordinator(0, group);
        out.findTransactionCoordinator = await coordinator(1, 'alice-tx');

        const join = await bob.request(ApiKey.JoinGroup, V.joinGroup, {
          groupId: group, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null,
        });
        out.joinGroup = code(join.errorCode as number);
        const commit = await bob.request(ApiKey.OffsetCommit, V.offsetCommit, {
          groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
          topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null }] }],
        });
        out.offsetCommit = (commit.topics as { partitions: Message[] }[])[0]!.partitions.map((p) => code(p.errorCode as number));
        const listed = await bob.request(ApiKey.ListGroups, 4, { statesFilter: [] });
        out.listGroups = { error: code(listed.errorCode as number), showsAlices: (listed.groups as Message[]).some((g) => g.groupId === group) };

        const transactional = await bob.request(ApiKey.InitProducerId, V.initProducerId, { transactionalId: 'alice-tx', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
        out.initTransactionalProducer = code(transactional.errorCode as number);
        const idempotent = await bob.request(ApiKey.InitProducerId, V.initProducerId, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
        out.initIdempotentProducer = code(idempotent.errorCode as number);

        const created = await bob.request(ApiKey.CreateTopics, 7, { topics: [{ name: 'bob-topic', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
        out.createTopics = (created.topics as Message[]).map((t) => code(t.errorCode as number));
        const deleted = await bob.request(ApiKey.DeleteTopics, 6, { topics: [{ name: topic, topicId: '00000000-0000-0000-0000-000000000000' }], timeoutMs: 5_000 });
        out.deleteTopics = (deleted.responses as Message[]).map((t) => code(t.errorCode as number));

        const acl = await bob.request(ApiKey.CreateAcls, 3, { creations: [{ resourceType: 2, resourceName: topic, resourcePatternType: 3, principal: 'User:bob', host: '*', operation: 2, permissionType: 3 }] });
        out.createAcls = (acl.results as Message[]).map((r) => code(r.errorCode as number));
        const described = await bob.request(ApiKey.DescribeAcls, 3, { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 });
        out.describeAcls = { error: code(described.errorCode as number), resources: (described.resources as unknown[]).length };
        const configs = await bob.request(ApiKey.DescribeConfigs, 4, { resources: [{ resourceType: 4, resourceName: '1', configurationKeys: ['log.retention.ms'] }, { resourceType: 2, resourceName: topic, configurationKeys: ['retention.ms'] }], includeSynonyms: false, includeDocumentation: false });
        out.describeConfigs = (configs.results as Message[]).map((r) => ({ resource: `${r.resourceType}:${r.resourceType === 4 ? '<broker>' : r.resourceName}`, error: code(r.errorCode as number) }));
        const alterScram = await bob.request(ApiKey.AlterUserScramCredentials, 0, { deletions: [{ name: 'alice', mechanism: 1 }], upsertions: [] });
        out.alterUserScramCredentials = (alterScram.results as Message[]).map((r) => ({ user: r.user, error: code(r.errorCode as number) }));
        // Last, on its own connection: Kafka 4.4 leaves this one unanswered, and a connection waits for its answers in order.
        const alone = await authenticatedAs(ctx, 'bob');
        try {
          const scram = await alone.request(ApiKey.DescribeUserScramCredentials, 0, { users: null }, 5_000).catch((e: Error) => {
            if (/gave up after/.test(e.message)) return 'no answer within 5 s' as const;
            throw e;
          });
          out.describeUserScramCredentials = typeof scram === 'string' ? scram : { error: code(scram.errorCode as number), results: (scram.results as unknown[]).length };
        } finally {
          alone.destroy();
        }
        return out;
      } finally {
        bob.destroy();
      }
    },
  },
  {
    name: 'authorization: alice within her ACLs, and the limits of them',
    async run(ctx) {
      const { topic, group } = await aliceResources(ctx, 'own');
      const alice = await authenticatedAs(ctx, 'alice');
      try {
        const out: Observation = {};
        const batch = buildBatch({ records: [{ key: null, value: Buffer.from('from alice'), headers: [] }] });
        const produce = async (name: string) => {
          const a = await alice.request(ApiKey.Produce, V.produce, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name, partitionData: [{ index: 0, records: batch }] }] });
          return code((a.responses as { partitionResponses: Message[] }[])[0]!.partitionResponses[0]!.errorCode as number);
        };
        // Kafka answers NOT_LEADER_OR_FOLLOWER while a new topic's partition is being led, and applies new ACLs
        // through its metadata log a moment after CreateAcls answers: asked again meanwhile, as clients retry.
        const settling = (answer: string) => answer.startsWith('NOT_LEADER') || answer.startsWith('TOPIC_AUTHORIZATION_FAILED');
        let own = 'NOT_LEADER_OR_FOLLOWER (6)';
        for (let i = 0; i < 100 && settling(own); i++) {
          own = await produce(topic);
          if (settling(own)) await sleep(100);
        }
        out.produceOwnTopic = own;
        out.produceOthersTopic = await produce('carol-elsewhere');
        // Kafka answers COORDINATOR_NOT_AVAILABLE while it makes its offsets topic for the first group: asked again, as clients do.
        let ownGroup = 'COORDINATOR_NOT_AVAILABLE (15)';
        for (let i = 0; i < 200 && ownGroup === 'COORDINATOR_NOT_AVAILABLE (15)'; i++) {
          const coordinator = await alice.request(ApiKey.FindCoordinator, 4, { keyType: 0, coordinatorKeys: [group] });
          ownGroup = code((coordinator.coordinators as Message[])[0]!.errorCode as number);
          if (ownGroup === 'COORDINATOR_NOT_AVAILABLE (15)') await sleep(100);
        }
        out.findOwnGroupCoordinator = ownGroup;
        const other = await alice.request(ApiKey.FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['carol-g'] });
        out.findOthersGroupCoordinator = code((other.coordinators as Message[])[0]!.errorCode as number);
        const md = await alice.request(ApiKey.Metadata, V.metadata, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
        out.ownTopicAuthorizedOperations = (md.topics as Message[])[0]!.topicAuthorizedOperations;
        return out;
      } finally {
        alice.destroy();
      }
    },
  },
];

export const SECURITY_SCENARIOS: readonly SecurityScenario[] = [...saslScenarios, ...authorizationScenarios];
