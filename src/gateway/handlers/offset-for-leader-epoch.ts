// OffsetForLeaderEpoch: the end offset of a leader epoch. Consumers ask it
// after a leader change to check that their position was not truncated away
// (librdkafka and the Java client do, with the epoch Fetch and Metadata gave
// them).
//
// There is one leader epoch, 0, for every partition, and it has been current
// since the partition was created; nothing is ever truncated. So, following
// Kafka's leader-epoch cache:
// - epoch 0 answers LeaderEpoch 0 and the high watermark as its end offset
//   (the log end offset: one replica, so they are the same);
// - a requested epoch above the current one, or -1 (undefined), answers
//   LeaderEpoch -1 and EndOffset -1 without an error;
// - CurrentLeaderEpoch (v2+, -1 = unchecked) above 0 answers
//   UNKNOWN_LEADER_EPOCH, below 0 FENCED_LEADER_EPOCH, as a leader does for
//   an epoch it has not reached or has left;
// - an unknown topic or partition answers UNKNOWN_TOPIC_OR_PARTITION.
//
// Versions: LeaderEpoch in the answer from v1; CurrentLeaderEpoch from v2;
// ReplicaId (v3+) is ignored: every caller is answered as a consumer.
//
// ACLs: DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { OffsetForLeaderEpoch } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import type { PartitionOffsets, PartitionRef, ReadError } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE, readErrorCode } from '../kafka-errors.js';
import { topicNameProblem } from '../topics.js';

const CURRENT_EPOCH = 0;
const UNDEFINED_EPOCH = -1;

type EpochRequest = RequestOf<typeof OffsetForLeaderEpoch>['topics'][number]['partitions'][number];

function endOfEpoch(asked: EpochRequest, offsets: (PartitionOffsets & { error: ReadError | null }) | undefined) {
  const answer = (errorCode: number, leaderEpoch = UNDEFINED_EPOCH, endOffset = -1) => ({ errorCode, partition: asked.partition, leaderEpoch, endOffset });
  if (!offsets) return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (offsets.error !== null) return answer(readErrorCode(offsets.error));
  if (asked.currentLeaderEpoch !== UNDEFINED_EPOCH && asked.currentLeaderEpoch !== CURRENT_EPOCH) {
    return answer(asked.currentLeaderEpoch > CURRENT_EPOCH ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH);
  }
  if (asked.leaderEpoch !== CURRENT_EPOCH) return answer(NONE);
  return answer(NONE, CURRENT_EPOCH, offsets.highWatermark);
}

const slot = (queue: string, partition: number) => `${partition}:${queue}`;

export const offsetForLeaderEpoch: ApiHandler<typeof OffsetForLeaderEpoch> = {
  api: OffsetForLeaderEpoch,
  versions: '0-4',
  async handle(request, ctx) {
    const asked: { topic: string; partitions: EpochRequest[] }[] = request.topics;
    const describable = new Set(asked.map((t) => t.topic).filter((name) => ctx.access.allows('DESCRIBE', 'TOPIC', name)));
    const refs: PartitionRef[] = asked
      .filter((t) => topicNameProblem(t.topic) === null && describable.has(t.topic))
      .flatMap((t) => t.partitions.filter((p) => p.partition >= 0).map((p) => ({ queue: t.topic, partition: p.partition })));
    const found = refs.length > 0 ? (await ctx.core.offsets({ partitions: refs })).partitions : [];
    const offsets = new Map(found.map((o) => [slot(o.queue, o.partition), o]));
    return {
      throttleTimeMs: 0,
      topics: asked.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) =>
          describable.has(t.topic) ? endOfEpoch(p, offsets.get(slot(t.topic, p.partition))) : { errorCode: DENIED_CODE.TOPIC, partition: p.partition, leaderEpoch: -1, endOffset: -1 },
        ),
      })),
    };
  },
};
