// AlterShareGroupOffsets: sets the start offsets of an empty share group's
// share-partitions (kafka-share-groups.sh --reset-offsets --execute); records
// in flight there are forgotten. A group with members answers NON_EMPTY_GROUP.
//
// ACLs: READ on the group (GROUP_AUTHORIZATION_FAILED), READ on each topic.
import { AlterShareGroupOffsets } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { orInvalidRequest, shareErrorCode } from '../share-sessions.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { describeTopics, ZERO_UUID } from '../topics.js';

function refused(errorCode: number, errorMessage: string | null = null) {
  return { throttleTimeMs: 0, errorCode, errorMessage, responses: [] };
}

export const alterShareGroupOffsets: ApiHandler<typeof AlterShareGroupOffsets> = {
  api: AlterShareGroupOffsets,
  versions: '0',
  async handle(request, ctx) {
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return refused(DENIED_CODE.GROUP);
    const allowed = request.topics.filter((t) => ctx.access.allows('READ', 'TOPIC', t.topicName));
    const result = await orInvalidRequest(() =>
      ctx.core.alterShareGroupOffsets({
        group: request.groupId,
        partitions: allowed.flatMap((t) => t.partitions.map((p) => ({ queue: t.topicName, partition: p.partitionIndex, startOffset: Number(p.startOffset) }))),
      }),
    );
    if ('invalid' in result) return refused(ErrorCode.INVALID_REQUEST, result.invalid);
    if (result.error !== null) return refused(shareErrorCode(result.error));
    const infos = await describeTopics(ctx, request.topics.map((t) => t.topicName));
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      responses: request.topics.map((t) => ({
        topicName: t.topicName,
        topicId: infos.get(t.topicName)?.id ?? ZERO_UUID,
        partitions: t.partitions.map((p) => {
          const denied = !allowed.includes(t);
          const r = result.partitions.find((x) => x.queue === t.topicName && x.partition === p.partitionIndex);
          return { partitionIndex: p.partitionIndex, errorCode: denied ? DENIED_CODE.TOPIC : shareErrorCode(r?.error ?? null), errorMessage: null };
        }),
      })),
    };
  },
  unavailable: (_request, errorCode) => refused(errorCode),
};
