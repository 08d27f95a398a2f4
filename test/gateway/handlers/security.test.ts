/**
 * The security handlers called in process (./in-process.ts): CreateAcls,
 * DescribeAcls, DeleteAcls (and a data handler obeying what they store),
 * AlterClientQuotas, DescribeClientQuotas, AlterUserScramCredentials,
 * DescribeUserScramCredentials, SaslHandshake and SaslAuthenticate (PLAIN and
 * a whole SCRAM exchange against credentials stored over the wire), at the
 * oldest and newest version served.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import { buildSasl } from '../../../src/gateway/sasl/settings.js';
import { InProcessGateway, named, versionEnds, type InProcessConnection } from './in-process.js';

// Kafka's wire codes for ACL fields.
const RESOURCE = { ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4 } as const;
const PATTERN = { ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
const OPERATION = { ANY: 1, READ: 3, WRITE: 4, DESCRIBE: 8 } as const;
const PERMISSION = { ANY: 1, DENY: 2, ALLOW: 3 } as const;
const SCRAM_SHA_256 = 1;
const SCRAM_SHA_512 = 2;
const MATCH_EXACT = 0;
const MATCH_ANY = 2;

let secured: InProcessGateway;
let open: InProcessGateway;
let admin: InProcessConnection;
let serial = 0;

beforeAll(async () => {
  secured = await InProcessGateway.open({ authorization: { enabled: true, superUsers: ['User:admin'] } });
  admin = secured.openConnection().as('User:admin');
  open = await InProcessGateway.open();
});
afterAll(async () => {
  await secured.close();
  await open.close();
});

const allow = (principal: string, name: string, operation: number, resourceType: number = RESOURCE.TOPIC, resourcePatternType: number = PATTERN.LITERAL) => ({
  resourceType, resourceName: name, resourcePatternType, principal, host: '*', operation, permissionType: PERMISSION.ALLOW,
});
const filter = (more: Partial<Record<string, unknown>> = {}) => ({
  resourceTypeFilter: RESOURCE.ANY, resourceNameFilter: null, patternTypeFilter: PATTERN.ANY, principalFilter: null, hostFilter: null, operation: OPERATION.ANY, permissionType: PERMISSION.ANY, ...more,
});

async function produce(gw: InProcessGateway, connection: InProcessConnection, name: string): Promise<string> {
  const response = await gw.answer(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name, partitionData: [{ index: 0, records: buildBatch({ records: [{ value: 'v' }] }) }] }] }, { connection });
  return named(response.responses[0].partitionResponses[0].errorCode);
}

describe('CreateAcls, DescribeAcls, DeleteAcls', () => {
  it.each(versionEnds(ApiKey.CreateAcls))('v%i: a binding created over the wire lets its principal write at once, and is listed and deleted', async (version) => {
    const name = `acl-topic-${++serial}`;
    await secured.core.createQueue({ name, partitions: 1, config: { dedupWindowSeconds: 0 } });
    const alice = secured.openConnection().as(`User:alice-${version}`);
    expect(await produce(secured, alice, name)).toBe('TOPIC_AUTHORIZATION_FAILED');

    const created = await secured.answer(ApiKey.CreateAcls, version, { creations: [allow(`User:alice-${version}`, name, OPERATION.WRITE)] }, { connection: admin });
    expect(created.results.map((r: Message) => named(r.errorCode))).toEqual(['NONE']);
    expect(await produce(secured, alice, name)).toBe('NONE');

    const described = await secured.answer(ApiKey.DescribeAcls, version, filter({ resourceNameFilter: name, ...(version === 0 ? { patternTypeFilter: PATTERN.LITERAL } : {}) }), { connection: admin });
    expect(named(described.errorCode)).toBe('NONE');
    expect(described.resources.map((r: Message) => [r.resourceType, r.resourceName, r.acls.map((a: Message) => [a.principal, a.operation, a.permissionType])])).toEqual([
      [RESOURCE.TOPIC, name, [[`User:alice-${version}`, OPERATION.WRITE, PERMISSION.ALLOW]]],
    ]);

    const deleted = await secured.answer(ApiKey.DeleteAcls, version, { filters: [filter({ resourceNameFilter: name, ...(version === 0 ? { patternTypeFilter: PATTERN.LITERAL } : {}) })] }, { connection: admin });
    expect(deleted.filterResults.map((f: Message) => [named(f.errorCode), f.matchingAcls.map((a: Message) => a.principal)])).toEqual([['NONE', [`User:alice-${version}`]]]);
    expect(await produce(secured, alice, name)).toBe('TOPIC_AUTHORIZATION_FAILED');
  });

  it('checks each creation on its own: a bad one answers INVALID_REQUEST with the reason, the good ones are stored', async () => {
    const name = `acl-mixed-${++serial}`;
    const created = await secured.answer(ApiKey.CreateAcls, 3, {
      creations: [allow('User:bob', name, OPERATION.READ), allow('bob', name, OPERATION.READ), allow('User:bob', name, OPERATION.ANY), allow('User:bob', 'other', OPERATION.READ, RESOURCE.CLUSTER)],
    }, { connection: admin });
    expect(created.results.map((r: Message) => named(r.errorCode))).toEqual(['NONE', 'INVALID_REQUEST', 'INVALID_REQUEST', 'INVALID_REQUEST']);
    expect(created.results[1].errorMessage).toMatch(/principal/i);
    const listed = await secured.answer(ApiKey.DescribeAcls, 3, filter({ resourceNameFilter: name }), { connection: admin });
    expect(listed.resources.flatMap((r: Message) => r.acls.map((a: Message) => a.principal))).toEqual(['User:bob']);
  });

  it('MATCH finds the literal, the wildcard and the prefixes that apply to a name', async () => {
    const principal = `User:matcher-${++serial}`;
    await secured.answer(ApiKey.CreateAcls, 3, {
      creations: [allow(principal, 'pay-orders', OPERATION.READ), allow(principal, 'pay-', OPERATION.READ, RESOURCE.TOPIC, PATTERN.PREFIXED), allow(principal, '*', OPERATION.READ), allow(principal, 'invoices', OPERATION.READ)],
    }, { connection: admin });
    const matched = await secured.answer(ApiKey.DescribeAcls, 3, filter({ resourceTypeFilter: RESOURCE.TOPIC, resourceNameFilter: 'pay-orders', patternTypeFilter: PATTERN.MATCH, principalFilter: principal }), { connection: admin });
    expect(matched.resources.map((r: Message) => `${r.resourceName}/${r.patternType}`).sort()).toEqual(['*/3', 'pay-/4', 'pay-orders/3']);
  });

  it('needs ALTER and DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED), and answers SECURITY_DISABLED with no authorizer', async () => {
    const mallory = secured.openConnection().as('User:mallory');
    const created = await secured.answer(ApiKey.CreateAcls, 3, { creations: [allow('User:mallory', '*', OPERATION.WRITE)] }, { connection: mallory });
    expect(created.results.map((r: Message) => named(r.errorCode))).toEqual(['CLUSTER_AUTHORIZATION_FAILED']);
    expect(named((await secured.answer(ApiKey.DescribeAcls, 3, filter(), { connection: mallory })).errorCode)).toBe('CLUSTER_AUTHORIZATION_FAILED');
    const deleted = await secured.answer(ApiKey.DeleteAcls, 3, { filters: [filter()] }, { connection: mallory });
    expect(named(deleted.filterResults[0].errorCode)).toBe('CLUSTER_AUTHORIZATION_FAILED');
    expect(named((await open.answer(ApiKey.DescribeAcls, 3, filter())).errorCode)).toBe('SECURITY_DISABLED');
    expect((await open.answer(ApiKey.CreateAcls, 3, { creations: [allow('User:x', 't', OPERATION.READ)] })).results.map((r: Message) => named(r.errorCode))).toEqual(['SECURITY_DISABLED']);
  });
});

describe('AlterClientQuotas and DescribeClientQuotas', () => {
  const entity = (user: string | null, clientId?: string | null) => [
    { entityType: 'user', entityName: user },
    ...(clientId === undefined ? [] : [{ entityType: 'client-id', entityName: clientId }]),
  ];

  it.each(versionEnds(ApiKey.AlterClientQuotas))('v%i sets, lists and removes values per entity; ValidateOnly changes nothing', async (version) => {
    const user = `quota-user-${++serial}`;
    const set = (validateOnly: boolean, ops: Message[]) => open.answer(ApiKey.AlterClientQuotas, version, { entries: [{ entity: entity(user, 'app'), ops }], validateOnly });
    const describe = async () => {
      const response = await open.answer(ApiKey.DescribeClientQuotas, version, { components: [{ entityType: 'user', matchType: MATCH_EXACT, match: user }], strict: false });
      expect(named(response.errorCode)).toBe('NONE');
      return response.entries.map((e: Message) => [e.entity.map((c: Message) => `${c.entityType}=${c.entityName}`).sort(), Object.fromEntries(e.values.map((v: Message) => [v.key, v.value]))]);
    };
    expect((await set(true, [{ key: 'producer_byte_rate', value: 1024, remove: false }])).entries.map((e: Message) => named(e.errorCode))).toEqual(['NONE']);
    expect(await describe()).toEqual([]);
    await set(false, [{ key: 'producer_byte_rate', value: 1024, remove: false }, { key: 'request_percentage', value: 50, remove: false }]);
    expect(await describe()).toEqual([[['client-id=app', `user=${user}`], { producer_byte_rate: 1024, request_percentage: 50 }]]);
    await set(false, [{ key: 'producer_byte_rate', value: 0, remove: true }]);
    expect(await describe()).toEqual([[['client-id=app', `user=${user}`], { request_percentage: 50 }]]);
  });

  it('refuses an unknown key, a value not above 0 and an unknown entity type entry by entry, applying the good ones', async () => {
    const user = `quota-mixed-${++serial}`;
    const response = await open.answer(ApiKey.AlterClientQuotas, 1, {
      entries: [
        { entity: entity(user), ops: [{ key: 'consumer_byte_rate', value: 2048, remove: false }] },
        { entity: entity(`${user}-b`), ops: [{ key: 'bytes_per_fortnight', value: 1, remove: false }] },
        { entity: entity(`${user}-c`), ops: [{ key: 'producer_byte_rate', value: -5, remove: false }] },
        { entity: [{ entityType: 'ip', entityName: '10.0.0.1' }], ops: [{ key: 'producer_byte_rate', value: 5, remove: false }] },
      ],
      validateOnly: false,
    });
    expect(response.entries.map((e: Message) => named(e.errorCode))).toEqual(['NONE', 'INVALID_REQUEST', 'INVALID_REQUEST', 'INVALID_REQUEST']);
    expect(response.entries[1].errorMessage).toMatch(/bytes_per_fortnight/);
    const listed = await open.answer(ApiKey.DescribeClientQuotas, 1, { components: [{ entityType: 'user', matchType: MATCH_ANY, match: null }], strict: false });
    const users = listed.entries.flatMap((e: Message) => e.entity.map((c: Message) => c.entityName));
    expect(users).toContain(user);
    expect(users).not.toContain(`${user}-b`);
  });

  it('needs ALTER_CONFIGS / DESCRIBE_CONFIGS on the cluster under the authorizer', async () => {
    const mallory = secured.openConnection().as('User:mallory');
    const altered = await secured.answer(ApiKey.AlterClientQuotas, 1, { entries: [{ entity: entity('mallory'), ops: [{ key: 'producer_byte_rate', value: 1e9, remove: false }] }], validateOnly: false }, { connection: mallory });
    expect(named(altered.entries[0].errorCode)).toBe('CLUSTER_AUTHORIZATION_FAILED');
    const described = await secured.answer(ApiKey.DescribeClientQuotas, 1, { components: [], strict: false }, { connection: mallory });
    expect(named(described.errorCode)).toBe('CLUSTER_AUTHORIZATION_FAILED');
  });
});

/** A SCRAM client (RFC 5802), enough to log in through SaslAuthenticate. */
function scramClient(hash: 'sha256' | 'sha512', user: string, password: string) {
  const clientNonce = randomBytes(18).toString('base64');
  const clientFirstBare = `n=${user},r=${clientNonce}`;
  let authMessage = '';
  let serverKey = Buffer.alloc(0);
  return {
    first: () => Buffer.from(`n,,${clientFirstBare}`),
    final(serverFirst: Buffer): Buffer {
      const fields = Object.fromEntries(serverFirst.toString().split(',').map((f) => [f[0], f.slice(2)]));
      expect(fields.r!.startsWith(clientNonce)).toBe(true);
      const salted = pbkdf2Sync(password, Buffer.from(fields.s!, 'base64'), Number(fields.i), hash === 'sha256' ? 32 : 64, hash);
      const clientKey = createHmac(hash, salted).update('Client Key').digest();
      serverKey = createHmac(hash, salted).update('Server Key').digest();
      const withoutProof = `c=biws,r=${fields.r}`;
      authMessage = `${clientFirstBare},${serverFirst.toString()},${withoutProof}`;
      const signature = createHmac(hash, createHash(hash).update(clientKey).digest()).update(authMessage).digest();
      const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
      return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`);
    },
    serverSignature: () => `v=${createHmac(hash, serverKey).update(authMessage).digest('base64')}`,
  };
}

describe('AlterUserScramCredentials, DescribeUserScramCredentials, SaslHandshake, SaslAuthenticate', () => {
  const upsert = (name: string, password: string, mechanism = SCRAM_SHA_256, iterations = 4096) => {
    const salt = randomBytes(16);
    return { name, mechanism, iterations, salt, saltedPassword: pbkdf2Sync(password, salt, iterations, mechanism === SCRAM_SHA_256 ? 32 : 64, mechanism === SCRAM_SHA_256 ? 'sha256' : 'sha512') };
  };
  const sasl = (gw: InProcessGateway) => gw.openConnection().withSasl(buildSasl({ maxReauthMs: 60_000 }, gw.core).settings);

  it('stores credentials per user and mechanism, describes them without secrets, and refuses bad ones as Kafka does', async () => {
    const user = `scram-${++serial}`;
    const altered = await open.answer(ApiKey.AlterUserScramCredentials, 0, {
      deletions: [{ name: `${user}-nobody`, mechanism: SCRAM_SHA_256 }],
      upsertions: [upsert(user, 'secret'), upsert(user, 'secret', SCRAM_SHA_512, 8192), upsert(`${user}-weak`, 'x', SCRAM_SHA_256, 1000), upsert('', 'x')],
    });
    const results = Object.fromEntries(altered.results.map((r: Message) => [r.user, named(r.errorCode)]));
    expect(results).toEqual({ [`${user}-nobody`]: 'RESOURCE_NOT_FOUND', [user]: 'NONE', [`${user}-weak`]: 'UNACCEPTABLE_CREDENTIAL', '': 'UNACCEPTABLE_CREDENTIAL' });
    const described = await open.answer(ApiKey.DescribeUserScramCredentials, 0, { users: [{ name: user }, { name: `${user}-weak` }] });
    expect(described.results.map((r: Message) => [r.user, named(r.errorCode), r.credentialInfos])).toEqual([
      [user, 'NONE', [{ mechanism: SCRAM_SHA_256, iterations: 4096 }, { mechanism: SCRAM_SHA_512, iterations: 8192 }]],
      [`${user}-weak`, 'RESOURCE_NOT_FOUND', []],
    ]);
    const twice = await open.answer(ApiKey.DescribeUserScramCredentials, 0, { users: [{ name: user }, { name: user }] });
    expect(twice.results.map((r: Message) => named(r.errorCode))).toEqual(['DUPLICATE_RESOURCE']);
  });

  it.each(versionEnds(ApiKey.SaslAuthenticate))('v%i: a user stored over the wire logs in with SCRAM-SHA-512, the server proving itself too', async (version) => {
    const user = `scram-login-${++serial}`;
    await open.answer(ApiKey.AlterUserScramCredentials, 0, { deletions: [], upsertions: [upsert(user, 'pw-512', SCRAM_SHA_512)] });
    const connection = sasl(open);
    const handshake = await open.answer(ApiKey.SaslHandshake, 1, { mechanism: 'SCRAM-SHA-512' }, { connection });
    expect([named(handshake.errorCode), handshake.mechanisms]).toEqual(['NONE', ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']]);
    const client = scramClient('sha512', user, 'pw-512');
    const first = await open.answer(ApiKey.SaslAuthenticate, version, { authBytes: client.first() }, { connection });
    expect(named(first.errorCode)).toBe('NONE');
    const final = await open.answer(ApiKey.SaslAuthenticate, version, { authBytes: client.final(first.authBytes) }, { connection });
    expect(named(final.errorCode)).toBe('NONE');
    expect(final.authBytes.toString()).toBe(client.serverSignature());
    if (version >= 1) expect(final.sessionLifetimeMs).toBe(60_000n);
    expect(connection.state.principal).toBe(`User:${user}`);
    const again = await open.answer(ApiKey.SaslAuthenticate, version, { authBytes: Buffer.from('more') }, { connection });
    expect(named(again.errorCode)).toBe('ILLEGAL_SASL_STATE');
  });

  it('a wrong password fails with SASL_AUTHENTICATION_FAILED and a message naming the mechanism, and the principal stays anonymous', async () => {
    const user = `scram-wrong-${++serial}`;
    await open.answer(ApiKey.AlterUserScramCredentials, 0, { deletions: [], upsertions: [upsert(user, 'right')] });
    const connection = sasl(open);
    await open.answer(ApiKey.SaslHandshake, 1, { mechanism: 'SCRAM-SHA-256' }, { connection });
    const client = scramClient('sha256', user, 'wrong');
    const first = await open.answer(ApiKey.SaslAuthenticate, 2, { authBytes: client.first() }, { connection });
    const final = await open.answer(ApiKey.SaslAuthenticate, 2, { authBytes: client.final(first.authBytes) }, { connection });
    expect([named(final.errorCode), final.errorMessage]).toEqual(['SASL_AUTHENTICATION_FAILED', 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256']);
    expect(connection.state.principal).toBe('User:ANONYMOUS');
    expect(connection.authentications.at(-1)).toMatch(/^failed /);
  });

  it('PLAIN checks the same SCRAM store; an unknown mechanism gets UNSUPPORTED_SASL_MECHANISM with the list', async () => {
    const user = `plain-${++serial}`;
    await open.answer(ApiKey.AlterUserScramCredentials, 0, { deletions: [], upsertions: [upsert(user, 'plain-pw')] });
    const good = sasl(open);
    expect(named((await open.answer(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }, { connection: good })).errorCode)).toBe('NONE');
    const ok = await open.answer(ApiKey.SaslAuthenticate, 0, { authBytes: Buffer.from(`\u0000${user}\u0000plain-pw`) }, { connection: good });
    expect([named(ok.errorCode), good.state.principal]).toEqual(['NONE', `User:${user}`]);
    const bad = sasl(open);
    await open.answer(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }, { connection: bad });
    const refused = await open.answer(ApiKey.SaslAuthenticate, 0, { authBytes: Buffer.from(`\u0000${user}\u0000nope`) }, { connection: bad });
    expect(named(refused.errorCode)).toBe('SASL_AUTHENTICATION_FAILED');
    const unknown = await open.answer(ApiKey.SaslHandshake, 1, { mechanism: 'GSSAPI' }, { connection: sasl(open) });
    expect([named(unknown.errorCode), unknown.mechanisms]).toEqual(['UNSUPPORTED_SASL_MECHANISM', ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']]);
  });

  it('SaslAuthenticate before a handshake, and either API on a listener without SASL, answer ILLEGAL_SASL_STATE', async () => {
    const early = await open.answer(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from('x') }, { connection: sasl(open) });
    expect(named(early.errorCode)).toBe('ILLEGAL_SASL_STATE');
    expect(named((await open.answer(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' })).errorCode)).toBe('ILLEGAL_SASL_STATE');
    expect(named((await open.answer(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from('x') })).errorCode)).toBe('ILLEGAL_SASL_STATE');
  });
});
