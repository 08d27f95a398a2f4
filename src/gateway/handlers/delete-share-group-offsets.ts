// DeleteShareGroupOffsets: forgets an empty share group's state for whole
// topics (kafka-share-groups.sh --delete-offsets); the next member starts
// there from share.auto.offset.reset. A group with members answers
// NON_EMPTY_GROUP.
//
// ACLs: DELETE on the group (GROUP_AUTHORIZATION_FAILED), READ on each topic.
import { DeleteShareGroupOffsets } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { orInvalidRequest, shareErrorCode } from '../share-sessions.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { describeTopics, ZERO_UUID } from '../topics.js';

function refused(errorCode: number, errorMessage: string | null = null) {
  return { throttleTimeMs: 0, errorCode, errorMessage, responses: [] };
}

export const deleteShareGroupOffsets: ApiHandler<typeof DeleteShareGroupOffsets> = {
  api: DeleteShareGroupOffsets,
  versions: '0',
  async handle(request, ctx) {
    if (!ctx.access.allows('DELETE', 'GROUP', request.groupId)) return refused(DENIED_CODE.GROUP);
    const names = request.topics.map((t) => t.topicName);
    const allowed = names.filter((n) => ctx.access.allows('READ', 'TOPIC', n));
    const result = await orInvalidRequest(() => ctx.core.deleteShareGroupOffsets({ group: request.groupId, queues: allowed }));
    if ('invalid' in result) return refused(ErrorCode.INVALID_REQUEST, result.invalid);
    if (result.error !== null) return refused(shareErrorCode(result.error));
    const infos = await describeTopics(ctx, names);
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      responses: names.map((topicName) => {
        const r = result.queues.find((q) => q.queue === topicName);
        return { topicName, topicId: infos.get(topicName)?.id ?? ZERO_UUID, errorCode: allowed.includes(topicName) ? shareErrorCode(r?.error ?? null) : DENIED_CODE.TOPIC, errorMessage: null };
      }),
    };
  },
  unavailable: (_request, errorCode) => refused(errorCode),
};
