// ListOffsets: finds an offset by time in each partition: the earliest (-2),
// the latest (-1), the one holding the largest timestamp (-3, v7+), or the
// first offset whose record timestamp is at or after a given time.
//
// Choices:
// - read_committed (IsolationLevel 1, v2+) makes "latest" the last stable
//   offset; the core applies it.
// - -4 (earliest local, v8+) is the earliest: all data is local here. -5
//   (latest tiered, v9+) answers offset -1: nothing is tiered.
// - A time past every record answers offset -1 and timestamp -1, as Kafka does.
// - LeaderEpoch is 0 (the only epoch) when an offset is found, else -1.
//
// Versions: v0 answers in the old shape, OldStyleOffsets: a list of at most
// MaxNumOffsets offsets; here at most one, which is what clients ask for.
//
// ACLs: DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ListOffsets } from '../../../protocol/messages/index.js';
import { EARLIEST_TIMESTAMP } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { topicNameProblem } from '../topics.js';

const EARLIEST_LOCAL_TIMESTAMP = -4;
const LATEST_TIERED_TIMESTAMP = -5;

async function findOffset(ctx: HandlerContext, topic: string, partition: number, timestamp: number, readCommitted: boolean) {
  if (!ctx.access.allows('DESCRIBE', 'TOPIC', topic)) return { errorCode: DENIED_CODE.TOPIC, offset: -1, timestamp: -1 };
  if (topicNameProblem(topic) !== null) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, offset: -1, timestamp: -1 };
  if (timestamp === LATEST_TIERED_TIMESTAMP) return { errorCode: NONE, offset: -1, timestamp: -1 };
  try {
    const found = await ctx.core.offsetForTimestamp({
      queue: topic,
      partition,
      timestamp: timestamp === EARLIEST_LOCAL_TIMESTAMP ? EARLIEST_TIMESTAMP : timestamp,
      isolation: readCommitted ? 'read_committed' : 'read_uncommitted',
    });
    return { errorCode: NONE, offset: found.offset, timestamp: found.timestamp };
  } catch (e) {
    return { errorCode: kafkaErrorOf(e).errorCode, offset: -1, timestamp: -1 };
  }
}

export const listOffsets: ApiHandler<typeof ListOffsets> = {
  api: ListOffsets,
  versions: '0-10',
  async handle(request, ctx) {
    const readCommitted = request.isolationLevel === 1;
    const topics = await Promise.all(
      request.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(
          t.partitions.map(async (p) => {
            const found = await findOffset(ctx, t.name, p.partitionIndex, Number(p.timestamp), readCommitted);
            return {
              partitionIndex: p.partitionIndex,
              errorCode: found.errorCode,
              oldStyleOffsets: found.offset >= 0 && p.maxNumOffsets > 0 ? [found.offset] : [],
              timestamp: found.timestamp,
              offset: found.offset,
              leaderEpoch: found.offset >= 0 ? 0 : -1,
            };
          }),
        ),
      })),
    );
    return { throttleTimeMs: 0, topics };
  },
};
