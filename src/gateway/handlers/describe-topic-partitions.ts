// DescribeTopicPartitions: topics and their partitions (KIP-966), paged by a
// cursor, for admin clients that describe topics with many partitions.
//
// One broker: this gateway leads every partition with leader epoch 0 and is
// its only replica and ISR member, as in Metadata; no eligible leader
// replicas are kept, answered as empty lists as Kafka's broker does (the
// fields are nullable, but the Java admin client 4.x fails with a
// NullPointerException in describeTopics on a null).
//
// Choices, following Kafka's broker:
// - An empty topic list means every topic. Topics are answered in name order,
//   starting at the cursor's topic and, within it, at the cursor's partition.
// - At most min(ResponsePartitionLimit, 2000) partitions, and at least one,
//   go into one answer. When more remain, NextCursor names the first one
//   left out; otherwise it is null.
// - A named topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION (a
//   name no topic could have, INVALID_TOPIC_EXCEPTION) with no partitions;
//   it uses none of the limit.
// - A cursor whose topic is not among the named topics, or whose partition is
//   negative, makes every topic answer INVALID_REQUEST.
// - Topics the principal may not DESCRIBE: a named one answers
//   TOPIC_AUTHORIZATION_FAILED (whether it exists or not, so nothing leaks);
//   when every topic is asked for, they are left out.
// - TopicAuthorizedOperations is what the principal may do on each topic.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeTopicPartitions } from '../../../protocol/messages/index.js';
import type { PartitionInfo, QueueInfo } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { listedBrokers, partitionLeadership } from '../brokers.js';
import { describeTopics, topicNameProblem, ZERO_UUID } from '../topics.js';

/** Kafka's max.request.partition.size.limit default. */
const MAX_PARTITIONS_PER_RESPONSE = 2000;

interface Cursor {
  topicName: string;
  partitionIndex: number;
}

/** Java's String.compareTo order (UTF-16 code units), which Kafka's cursor follows. */
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function describedPartition(brokerIds: readonly number[], topic: string, partition: PartitionInfo) {
  return { ...partitionLeadership(brokerIds, topic, partition.index), eligibleLeaderReplicas: [], lastKnownElr: [] };
}

function topicAnswer(ctx: HandlerContext, name: string, errorCode: number, queue: QueueInfo | null = null, partitions: object[] = []) {
  return { errorCode, name, topicId: queue?.id ?? ZERO_UUID, isInternal: false, partitions, topicAuthorizedOperations: ctx.access.operations('TOPIC', name) };
}

async function topicsByName(ctx: HandlerContext, asked: string[]): Promise<Map<string, QueueInfo | null>> {
  if (asked.length === 0) return new Map((await ctx.core.listQueues()).filter((q) => ctx.access.allows('DESCRIBE', 'TOPIC', q.name)).map((q) => [q.name, q]));
  const found = await describeTopics(ctx, asked.filter((name) => topicNameProblem(name) === null));
  return new Map(asked.map((name) => [name, found.get(name) ?? null]));
}

export const describeTopicPartitions: ApiHandler<typeof DescribeTopicPartitions> = {
  api: DescribeTopicPartitions,
  versions: '0',
  async handle(request, ctx) {
    const asked: string[] = request.topics.map((t) => t.name);
    const cursor: Cursor | null = request.cursor;
    const queues = await topicsByName(ctx, asked);
    const names = [...queues.keys()].filter((name) => byName(name, cursor?.topicName ?? '') >= 0).sort(byName);

    if (cursor && ((asked.length > 0 && !names.includes(cursor.topicName)) || cursor.partitionIndex < 0)) {
      ctx.log.debug({ cursor }, 'DescribeTopicPartitions: the cursor must name a requested topic and a partition of 0 or more');
      return { throttleTimeMs: 0, topics: [...queues.keys()].sort(byName).map((name) => topicAnswer(ctx, name, ErrorCode.INVALID_REQUEST)), nextCursor: null };
    }

    const brokerIds = listedBrokers(ctx).map((b) => b.nodeId);
    let budget = Math.max(Math.min(request.responsePartitionLimit, MAX_PARTITIONS_PER_RESPONSE), 1);
    const topics: object[] = [];
    let nextCursor: Cursor | null = null;
    for (const name of names) {
      if (!ctx.access.allows('DESCRIBE', 'TOPIC', name)) {
        topics.push(topicAnswer(ctx, name, DENIED_CODE.TOPIC));
        continue;
      }
      const queue = queues.get(name) ?? null;
      if (!queue) {
        topics.push(topicAnswer(ctx, name, topicNameProblem(name) === null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.INVALID_TOPIC_EXCEPTION));
        continue;
      }
      if (budget === 0) {
        nextCursor = { topicName: name, partitionIndex: 0 };
        break;
      }
      const from = name === cursor?.topicName ? cursor.partitionIndex : 0;
      const partitions = queue.partitions.filter((p) => p.index >= from).sort((a, b) => a.index - b.index);
      const shown = partitions.slice(0, budget);
      budget -= shown.length;
      topics.push(topicAnswer(ctx, name, NONE, queue, shown.map((p) => describedPartition(brokerIds, name, p))));
      if (shown.length < partitions.length) {
        nextCursor = { topicName: name, partitionIndex: partitions[shown.length]!.index };
        break;
      }
    }
    return { throttleTimeMs: 0, topics, nextCursor };
  },
};
