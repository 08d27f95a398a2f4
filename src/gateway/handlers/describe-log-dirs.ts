// DescribeLogDirs: the log directories of this broker and the partitions in
// each, with their sizes. A gateway keeps no log: every partition lives in
// the core's store, which every gateway reaches, so each gateway answers one
// log dir standing for that store, named after the core it uses
// (`queen-core://core-a:7070`, or `queen-core://in-process:HOST:PORT` with
// `serve`), holding every partition. Gateways of one core name the same dir.
//
// Choices:
// - PartitionSize is the bytes of the partition's stored batches, as
//   written (the core's partitionSizes), what Kafka's segment files would
//   hold less their indexes.
// - OffsetLag is 0 (the log end is the high watermark: there is one copy)
//   and IsFutureKey false (AlterReplicaLogDirs has nothing to move).
// - TotalBytes and UsableBytes (v4) are -1, "unknown": the store's volume
//   belongs to PostgreSQL (or the core's memory), not to this process.
// - Topics asked for that do not exist, and partitions they lack, are left
//   out, as a Kafka broker leaves out what it does not host; null asks for
//   every topic.
// - Kafka needs DESCRIBE on the cluster: without it the answer is
//   CLUSTER_AUTHORIZATION_FAILED (v3+ at the top; before, an empty list).
//
// Versions: 1-4. Kafka 4 removed v0 (its clients start at 1); v2 is
// flexible, v3 adds the top-level error, v4 the volume sizes.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeLogDirs } from '../../../protocol/messages/index.js';
import type { PartitionRef } from '../../core/index.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { CLUSTER_NAME } from '../../access/acl-operations.js';
import { NONE } from '../kafka-errors.js';
import { topicNameProblem } from '../topics.js';

/** The name of the one log dir a gateway answers: the core it stores through. */
export function logDirOf(ctx: HandlerContext): string {
  const { cluster, advertised } = ctx.settings;
  return `queen-core://${cluster?.self.core ?? `in-process:${advertised.host}:${advertised.port}`}`;
}

/** The partitions asked for that exist: every one of every topic when `topics` is null. */
async function existingPartitions(ctx: HandlerContext, topics: { topic: string; partitions: number[] }[] | null): Promise<PartitionRef[]> {
  if (topics === null) return (await ctx.core.listQueues()).flatMap((q) => q.partitions.map((p) => ({ queue: q.name, partition: p.index })));
  const refs: PartitionRef[] = [];
  for (const { topic, partitions } of topics) {
    // A name no topic can have is a topic this log dir does not hold: left out, as Kafka leaves out any it lacks.
    if (topicNameProblem(topic) !== null) continue;
    const queue = await ctx.core.describeQueue({ name: topic });
    if (!queue) continue;
    const held = new Set(queue.partitions.map((p) => p.index));
    refs.push(...partitions.filter((p) => held.has(p)).map((partition) => ({ queue: topic, partition })));
  }
  return refs;
}

export const describeLogDirs: ApiHandler<typeof DescribeLogDirs> = {
  api: DescribeLogDirs,
  versions: '1-4',
  async handle(request, ctx) {
    if (!ctx.access.allows('DESCRIBE', 'CLUSTER', CLUSTER_NAME)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    }
    const refs = await existingPartitions(ctx, request.topics);
    const { partitions } = await ctx.core.partitionSizes({ partitions: refs });
    const byTopic = new Map<string, { partitionIndex: number; partitionSize: number; offsetLag: number; isFutureKey: boolean }[]>();
    // A partition deleted between the two calls answers an error here: it is left out like any partition not held.
    for (const p of partitions.filter((s) => s.error === null)) {
      const list = byTopic.get(p.queue) ?? byTopic.set(p.queue, []).get(p.queue)!;
      list.push({ partitionIndex: p.partition, partitionSize: p.bytes, offsetLag: 0, isFutureKey: false });
    }
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      results: [
        {
          errorCode: NONE,
          logDir: logDirOf(ctx),
          topics: [...byTopic].map(([name, list]) => ({ name, partitions: list })),
          totalBytes: -1,
          usableBytes: -1,
        },
      ],
    };
  },
};
