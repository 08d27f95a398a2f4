// DeleteRecords: moves partitions' log start offsets forward; records before
// the given offset are gone for every reader (Kafka and native alike).
//
// Choices:
// - Offset -1 means the high watermark: everything written so far goes.
// - An offset past the high watermark, or below -1, answers
//   OFFSET_OUT_OF_RANGE and deletes nothing, as in Kafka; an offset below
//   the current start changes nothing and answers the current start.
// - The answer's LowWatermark is the partition's log start offset afterwards;
//   -1 on error.
// - Unknown topics and partitions answer UNKNOWN_TOPIC_OR_PARTITION.
//
// Versions: 0-2 differ only in encoding (flexible from v2). The response has
// no error message field; the reason is logged at debug level.
//
// ACLs: DELETE on the topic, else TOPIC_AUTHORIZATION_FAILED (before its existence is looked at).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DeleteRecords } from '../../../protocol/messages/index.js';
import { isCoreError } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { topicNameProblem } from '../topics.js';

const HIGH_WATERMARK = -1;

async function deleteBefore(ctx: HandlerContext, topic: string, partition: number, offset: number): Promise<{ lowWatermark: number; errorCode: number }> {
  const failed = (errorCode: number) => ({ lowWatermark: -1, errorCode });
  if (!ctx.access.allows('DELETE', 'TOPIC', topic)) return failed(DENIED_CODE.TOPIC);
  if (topicNameProblem(topic) !== null || partition < 0) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (offset < HIGH_WATERMARK) return failed(ErrorCode.OFFSET_OUT_OF_RANGE);
  try {
    const { lowWatermark } = await ctx.core.deleteRecords({ queue: topic, partition, beforeOffset: offset });
    return { lowWatermark, errorCode: NONE };
  } catch (e) {
    // The core refuses an offset past the high watermark as a bad argument; to Kafka that is out of range.
    if (isCoreError(e) && e.code === 'invalid_argument') {
      ctx.log.debug({ topic, partition, offset, reason: e.message }, 'DeleteRecords refused');
      return failed(ErrorCode.OFFSET_OUT_OF_RANGE);
    }
    return failed(kafkaErrorOf(e).errorCode);
  }
}

export const deleteRecords: ApiHandler<typeof DeleteRecords> = {
  api: DeleteRecords,
  versions: '0-2',
  async handle(request, ctx) {
    const topics = await Promise.all(
      request.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(
          t.partitions.map(async (p) => ({
            partitionIndex: p.partitionIndex,
            ...(await deleteBefore(ctx, t.name, p.partitionIndex, Number(p.offset))),
          })),
        ),
      })),
    );
    return { throttleTimeMs: 0, topics };
  },
};
