// DescribeProducers: the idempotent producers the core remembers for each
// partition asked about (KIP-664), from the producer state kept with the log.
//
// Choices:
// - LastSequence is the last sequence number of the newest batch the core
//   retains for the producer; LastTimestamp is that batch's max timestamp.
// - CurrentTxnStartOffset is where the producer's open Kafka transaction
//   begins on the partition (-1 when none is open), as the core reports it;
//   CoordinatorEpoch is -1.
// - An unknown topic or partition answers UNKNOWN_TOPIC_OR_PARTITION with a
//   message; the other partitions are answered as usual.
//
// ACLs: READ on the topic, else TOPIC_AUTHORIZATION_FAILED.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeProducers } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { topicNameProblem } from '../topics.js';

async function describePartition(ctx: HandlerContext, topic: string, partitionIndex: number) {
  const failed = (errorCode: number, errorMessage: string) => ({ partitionIndex, errorCode, errorMessage, activeProducers: [] });
  if (!ctx.access.allows('READ', 'TOPIC', topic)) return failed(DENIED_CODE.TOPIC, `Not authorized to describe the producers of topic '${topic}': it needs READ on the topic.`);
  if (topicNameProblem(topic) !== null || partitionIndex < 0) {
    return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Partition ${topic}-${partitionIndex} does not exist.`);
  }
  try {
    const { producers } = await ctx.core.describeProducers({ queue: topic, partition: partitionIndex });
    return { partitionIndex, errorCode: NONE, errorMessage: null, activeProducers: producers };
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e);
    return failed(errorCode, errorMessage);
  }
}

export const describeProducers: ApiHandler<typeof DescribeProducers> = {
  api: DescribeProducers,
  versions: '0',
  async handle(request, ctx) {
    const topics = await Promise.all(
      request.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(t.partitionIndexes.map((p) => describePartition(ctx, t.name, p))),
      })),
    );
    return { throttleTimeMs: 0, topics };
  },
};
