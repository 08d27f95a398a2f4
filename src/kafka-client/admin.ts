/**
 * The few admin calls the reverse bridge makes on Kafka, over the client:
 * CreateTopics and CreatePartitions (any broker forwards them to the
 * controller) and OffsetCommit from outside a group (generation -1, no
 * member id: the commit a tool makes, refused while the group has members).
 * Each answers the broker's error code and message rather than throwing for
 * them, so the caller decides what a code means.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import type { KafkaClient } from './client.js';

export interface AdminAnswer {
  errorCode: number;
  errorMessage: string;
}

const TIMEOUT_MS = 60_000;

/** CreateTopics for one topic; replication factor -1: Kafka's default.replication.factor. */
export async function createTopic(client: KafkaClient, topic: string, partitions: number, configs: Record<string, string>): Promise<AdminAnswer> {
  const answer = await client.askAny(ApiKey.CreateTopics, {
    topics: [{ name: topic, numPartitions: partitions, replicationFactor: -1, assignments: [], configs: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
    timeoutMs: TIMEOUT_MS,
    validateOnly: false,
  });
  const result = (answer['topics'] as Message[])[0];
  return { errorCode: (result?.['errorCode'] as number) ?? -1, errorMessage: (result?.['errorMessage'] as string | null) ?? `error ${result?.['errorCode'] ?? 'missing'}` };
}

/** CreatePartitions: the topic grows to `count` partitions. */
export async function createPartitions(client: KafkaClient, topic: string, count: number): Promise<AdminAnswer> {
  const answer = await client.askAny(ApiKey.CreatePartitions, { topics: [{ name: topic, count, assignments: null }], timeoutMs: TIMEOUT_MS, validateOnly: false });
  const result = (answer['results'] as Message[])[0];
  return { errorCode: (result?.['errorCode'] as number) ?? -1, errorMessage: (result?.['errorMessage'] as string | null) ?? `error ${result?.['errorCode'] ?? 'missing'}` };
}

export interface OffsetToCommit {
  topic: string;
  partition: number;
  offset: number;
  metadata: string;
}

/** OffsetCommit at the group's coordinator, from outside the group; answers the first partition error (0: all committed). */
export async function commitOffsets(client: KafkaClient, group: string, offsets: readonly OffsetToCommit[]): Promise<AdminAnswer> {
  const topics = [...new Set(offsets.map((o) => o.topic))].map((name) => ({
    name,
    partitions: offsets.filter((o) => o.topic === name).map((o) => ({ partitionIndex: o.partition, committedOffset: BigInt(o.offset), committedLeaderEpoch: -1, committedMetadata: o.metadata })),
  }));
  const coordinator = await client.coordinator(0, group);
  const answer = await coordinator.request(ApiKey.OffsetCommit, { groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics });
  for (const t of answer['topics'] as Message[]) {
    for (const p of t['partitions'] as Message[]) {
      const code = p['errorCode'] as number;
      if (code !== 0) return { errorCode: code, errorMessage: `error ${code} committing ${t['name'] as string}/${p['partitionIndex'] as number}` };
    }
  }
  return { errorCode: 0, errorMessage: '' };
}
