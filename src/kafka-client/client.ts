/**
 * A small Kafka client over the project's own codecs, what the migration
 * bridge needs of a source cluster and no more: the cluster's brokers and
 * partition leaders (Metadata), log ends (ListOffsets), raw record batches as
 * stored (Fetch, handed out byte for byte), consumer groups and their
 * committed offsets (ListGroups, FindCoordinator, OffsetFetch) and topic
 * configs (DescribeConfigs); over TCP or TLS, with SASL PLAIN, SCRAM or
 * OAUTHBEARER. One connection per broker, dialed when first needed and again
 * after it fails; a caller that meets a leadership error refreshes metadata
 * (refreshMetadata) and asks again.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { BrokerConnection } from './connection.js';
import { KafkaAuthenticationError, KafkaConnectionError } from './errors.js';
import { clientSecurity, type ClientSecurity } from './settings.js';

/** COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: FindCoordinator is asked again. */
const COORDINATOR_RETRIABLE = new Set([14, 15, 16]);
const COORDINATOR_WAIT_MS = 30_000;
const COORDINATOR_RETRY_MS = 200;

export interface KafkaClientOptions {
  /** "host:port,host:port". */
  bootstrap: string;
  /** Security settings under librdkafka's names (settings.ts). */
  settings: Readonly<Record<string, string>>;
  clientId?: string;
  /** How long a request may go unanswered before its connection is given up. */
  requestTimeoutMs?: number;
}

export interface PartitionLeader {
  partition: number;
  leader: number;
  leaderEpoch: number;
  errorCode: number;
}

export interface TopicMetadata {
  name: string;
  errorCode: number;
  isInternal: boolean;
  partitions: PartitionLeader[];
}

export interface CommittedOffset {
  topic: string;
  partition: number;
  offset: number;
  metadata: string | null;
}

/** An error code a broker answered, with the API that answered it. */
export class KafkaError extends Error {
  override readonly name = 'KafkaError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Error codes after which the partition's leader is to be looked up again. */
export const LEADERSHIP_ERRORS = new Set([3, 5, 6, 56, 74, 75, 103]);

const DEFAULT_TIMEOUT_MS = 30_000;
const DYNAMIC_TOPIC_CONFIG = 1;

export class KafkaClient {
  private readonly security: ClientSecurity;
  private readonly bootstrap: { host: string; port: number }[];
  private readonly brokers = new Map<number, { host: string; port: number }>();
  private readonly connections = new Map<string, Promise<BrokerConnection>>();
  private readonly leaders = new Map<string, PartitionLeader>();
  private readonly clientId: string;
  private readonly timeoutMs: number;

  private constructor(options: KafkaClientOptions) {
    this.security = clientSecurity(options.settings);
    this.bootstrap = options.bootstrap.split(',').map((b) => b.trim()).filter(Boolean).map(parseHostPort);
    if (this.bootstrap.length === 0) throw new KafkaConnectionError('no bootstrap server given');
    this.clientId = options.clientId ?? 'queen-kafka-client';
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Reads the cluster's brokers through the first bootstrap server that answers; throws naming why none did. */
  static async connect(options: KafkaClientOptions): Promise<KafkaClient> {
    const client = new KafkaClient(options);
    await client.refreshMetadata([]);
    return client;
  }

  /** The node ids of the brokers the last metadata named. */
  get brokerIds(): number[] {
    return [...this.brokers.keys()];
  }

  /** The partition's leader as the last metadata said, or undefined. */
  leaderOf(topic: string, partition: number): PartitionLeader | undefined {
    return this.leaders.get(`${topic}\u0000${partition}`);
  }

  /**
   * Metadata for `topics` (null: every topic), remembered: brokers and
   * partition leaders. Asked of a broker known already, else the bootstrap
   * servers in turn.
   */
  async refreshMetadata(topics: string[] | null): Promise<TopicMetadata[]> {
    const body = { topics: topics === null ? null : topics.map((name) => ({ name })), allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false, includeClusterAuthorizedOperations: false };
    const answer = await this.anyBroker((c) => c.request(ApiKey.Metadata, body));
    for (const b of answer['brokers'] as Message[]) this.brokers.set(b['nodeId'] as number, { host: b['host'] as string, port: b['port'] as number });
    return (answer['topics'] as Message[]).map((t) => {
      const name = t['name'] as string;
      const partitions = (t['partitions'] as Message[]).map((p) => ({ partition: p['partitionIndex'] as number, leader: p['leaderId'] as number, leaderEpoch: p['leaderEpoch'] as number, errorCode: p['errorCode'] as number }));
      for (const p of partitions) this.leaders.set(`${name}\u0000${p.partition}`, p);
      partitions.sort((a, b) => a.partition - b.partition);
      return { name, errorCode: t['errorCode'] as number, isInternal: t['isInternal'] === true, partitions };
    });
  }

  /** The connection to a broker by node id, dialed when there is none (or the last one failed). */
  connection(nodeId: number): Promise<BrokerConnection> {
    const broker = this.brokers.get(nodeId);
    if (!broker) return Promise.reject(new KafkaConnectionError(`broker ${nodeId} is not in the cluster's metadata`));
    return this.dial(`node-${nodeId}`, broker);
  }

  /**
   * ListOffsets on the partitions' leaders: -1 the end (the last stable
   * offset when read_committed), -2 the log start. Answers per partition, in
   * the order asked; a partition whose leader answers an error throws it.
   */
  async listOffsets(parts: { topic: string; partition: number }[], timestamp: -1 | -2, readCommitted: boolean): Promise<number[]> {
    const byLeader = new Map<number, { topic: string; partition: number; at: number }[]>();
    parts.forEach((p, at) => {
      const leader = this.leaderOf(p.topic, p.partition)?.leader ?? -1;
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), { ...p, at }]);
    });
    const offsets = new Array<number>(parts.length);
    for (const [leader, asked] of byLeader) {
      if (leader < 0) throw new KafkaError(5, `${asked[0]!.topic}/${asked[0]!.partition} has no leader`);
      const topics = [...new Set(asked.map((a) => a.topic))].map((name) => ({ name, partitions: asked.filter((a) => a.topic === name).map((a) => ({ partitionIndex: a.partition, timestamp: BigInt(timestamp) })) }));
      const answer = await (await this.connection(leader)).request(ApiKey.ListOffsets, { replicaId: -1, isolationLevel: readCommitted ? 1 : 0, topics });
      for (const t of answer['topics'] as Message[]) {
        for (const p of t['partitions'] as Message[]) {
          const a = asked.find((x) => x.topic === t['name'] && x.partition === p['partitionIndex']);
          if (!a) continue;
          if (p['errorCode'] !== 0) throw new KafkaError(p['errorCode'] as number, `ListOffsets for ${a.topic}/${a.partition} answered error ${p['errorCode']}`);
          offsets[a.at] = Number(p['offset']);
        }
      }
    }
    return offsets;
  }

  /** Every consumer group any broker lists. */
  async listGroups(): Promise<string[]> {
    const groups = new Set<string>();
    for (const nodeId of this.brokerIds) {
      const answer = await (await this.connection(nodeId)).request(ApiKey.ListGroups, { statesFilter: [], typesFilter: [] });
      if (answer['errorCode'] !== 0) throw new KafkaError(answer['errorCode'] as number, `ListGroups at broker ${nodeId} answered error ${answer['errorCode']}`);
      for (const g of answer['groups'] as Message[]) groups.add(g['groupId'] as string);
    }
    return [...groups].sort();
  }

  /**
   * The coordinator of a group (keyType 0) or a transactional id (1), by
   * FindCoordinator; its connection. A coordinator not available yet or
   * still loading (Kafka creating __consumer_offsets, a coordinator moving)
   * is asked again after a pause, as Kafka's clients do, for up to
   * COORDINATOR_WAIT_MS.
   */
  async coordinator(keyType: 0 | 1, key: string): Promise<BrokerConnection> {
    const what = keyType === 0 ? `group ${key}` : `transactional id ${key}`;
    const deadline = Date.now() + COORDINATOR_WAIT_MS;
    let coordinator: Message | undefined;
    for (;;) {
      const found = await this.anyBroker((c) => c.request(ApiKey.FindCoordinator, { keyType, coordinatorKeys: [key] }));
      coordinator = (found['coordinators'] as Message[])[0];
      const code = coordinator?.['errorCode'] as number | undefined;
      if (code === undefined || !COORDINATOR_RETRIABLE.has(code) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, COORDINATOR_RETRY_MS));
    }
    if (!coordinator || coordinator['errorCode'] !== 0) throw new KafkaError((coordinator?.['errorCode'] as number) ?? -1, `FindCoordinator for ${what} answered error ${coordinator?.['errorCode']}`);
    const nodeId = coordinator['nodeId'] as number;
    this.brokers.set(nodeId, { host: coordinator['host'] as string, port: coordinator['port'] as number });
    return this.connection(nodeId);
  }

  /** Sends a request to any broker that answers (one known, else the bootstrap servers): for requests any broker serves. */
  askAny(apiKey: number, body: Message): Promise<Message> {
    return this.anyBroker((c) => c.request(apiKey, body));
  }

  /** A group's committed offsets, from its coordinator (FindCoordinator, then OffsetFetch). */
  async groupOffsets(group: string): Promise<CommittedOffset[]> {
    const answer = await (await this.coordinator(0, group)).request(ApiKey.OffsetFetch, { groups: [{ groupId: group, topics: null }], requireStable: false });
    const result = (answer['groups'] as Message[])[0];
    if (!result || result['errorCode'] !== 0) throw new KafkaError((result?.['errorCode'] as number) ?? -1, `OffsetFetch for group ${group} answered error ${result?.['errorCode']}`);
    return (result['topics'] as Message[]).flatMap((t) =>
      (t['partitions'] as Message[]).filter((p) => p['errorCode'] === 0).map((p) => ({ topic: t['name'] as string, partition: p['partitionIndex'] as number, offset: Number(p['committedOffset']), metadata: (p['metadata'] as string | null) ?? null })),
    );
  }

  /** The configs set on a topic (not the broker's defaults), by name. */
  async topicConfigs(topic: string): Promise<Record<string, string>> {
    const answer = await this.anyBroker((c) => c.request(ApiKey.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: topic, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }));
    const result = (answer['results'] as Message[])[0]!;
    if (result['errorCode'] !== 0) throw new KafkaError(result['errorCode'] as number, `DescribeConfigs for topic ${topic} answered error ${result['errorCode']}: ${result['errorMessage'] ?? ''}`);
    const configs: Record<string, string> = {};
    for (const c of result['configs'] as Message[]) {
      if (c['configSource'] === DYNAMIC_TOPIC_CONFIG && typeof c['value'] === 'string') configs[c['name'] as string] = c['value'];
    }
    return configs;
  }

  close(): void {
    for (const c of this.connections.values()) c.then((conn) => conn.close(), () => {});
    this.connections.clear();
  }

  /** Runs `ask` on a known broker, then on the bootstrap servers in turn, until one answers; a refused login ends the search. */
  private async anyBroker(ask: (c: BrokerConnection) => Promise<Message>): Promise<Message> {
    const reasons: string[] = [];
    const candidates: [string, { host: string; port: number }][] = [
      ...[...this.brokers].map(([id, b]): [string, { host: string; port: number }] => [`node-${id}`, b]),
      ...this.bootstrap.map((b, i): [string, { host: string; port: number }] => [`bootstrap-${i}`, b]),
    ];
    for (const [key, broker] of candidates) {
      try {
        return await ask(await this.dial(key, broker));
      } catch (e) {
        if (e instanceof KafkaAuthenticationError || !(e instanceof KafkaConnectionError)) throw e;
        reasons.push(e.message);
      }
    }
    throw new KafkaConnectionError(`no broker answered (${[...new Set(reasons)].join('; ')})`);
  }

  private dial(key: string, broker: { host: string; port: number }): Promise<BrokerConnection> {
    const known = this.connections.get(key);
    if (known) {
      return known.then(
        (c) => (c.closed ? this.redial(key, broker) : c),
        () => this.redial(key, broker),
      );
    }
    return this.redial(key, broker);
  }

  private redial(key: string, broker: { host: string; port: number }): Promise<BrokerConnection> {
    const opening = BrokerConnection.open({ ...broker, security: this.security, clientId: this.clientId, timeoutMs: this.timeoutMs });
    this.connections.set(key, opening);
    opening.catch(() => {
      if (this.connections.get(key) === opening) this.connections.delete(key);
    });
    return opening;
  }
}

function parseHostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const port = Number(address.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) throw new KafkaConnectionError(`${address} is not host:port`);
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ''), port };
}
