// DescribeShareGroupOffsets: each share-partition's start offset and lag
// (Kafka 4.4's v1), as kafka-share-groups.sh --describe shows them. Topics
// null asks for every partition the group has state for; a partition asked
// for without state answers start offset -1.
//
// ACLs: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED); topics the
// principal may not DESCRIBE are left out.
import { ZERO_UUID } from '../topics.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeShareGroupOffsets } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { orInvalidRequest, shareErrorCode } from '../share-sessions.js';
import { describeTopics } from '../topics.js';

function refusedGroup(groupId: string, errorCode: number, errorMessage: string | null = null) {
  return { groupId, topics: [], errorCode, errorMessage };
}

export const describeShareGroupOffsets: ApiHandler<typeof DescribeShareGroupOffsets> = {
  api: DescribeShareGroupOffsets,
  versions: '0-1',
  async handle(request, ctx) {
    const groups = [];
    for (const g of request.groups) {
      if (!ctx.access.allows('DESCRIBE', 'GROUP', g.groupId)) {
        groups.push(refusedGroup(g.groupId, DENIED_CODE.GROUP));
        continue;
      }
      const asked = g.topics === null ? null : g.topics.filter((t) => ctx.access.allows('DESCRIBE', 'TOPIC', t.topicName)).flatMap((t) => t.partitions.map((partition) => ({ queue: t.topicName, partition })));
      const result = await orInvalidRequest(() => ctx.core.describeShareGroupOffsets({ group: g.groupId, partitions: asked }));
      if ('invalid' in result) {
        groups.push(refusedGroup(g.groupId, ErrorCode.INVALID_REQUEST, result.invalid));
        continue;
      }
      if (result.error !== null) {
        groups.push(refusedGroup(g.groupId, shareErrorCode(result.error)));
        continue;
      }
      const visible = result.partitions.filter((p) => ctx.access.allows('DESCRIBE', 'TOPIC', p.queue));
      const infos = await describeTopics(ctx, visible.map((p) => p.queue));
      const names = [...new Set(visible.map((p) => p.queue))];
      groups.push({
        groupId: g.groupId,
        errorCode: 0,
        errorMessage: null,
        topics: names.map((topicName) => ({
          topicName,
          topicId: infos.get(topicName)?.id ?? ZERO_UUID,
          partitions: visible.filter((p) => p.queue === topicName).map((p) => ({
            partitionIndex: p.partition, startOffset: BigInt(p.startOffset), leaderEpoch: p.startOffset < 0 ? -1 : 0, lag: BigInt(p.lag),
            errorCode: p.error === null ? 0 : shareErrorCode(p.error), errorMessage: null,
          })),
        })),
      });
    }
    return { throttleTimeMs: 0, groups };
  },
  unavailable: (request, errorCode) => ({ throttleTimeMs: 0, groups: request.groups.map((g) => refusedGroup(g.groupId, errorCode ?? ErrorCode.COORDINATOR_NOT_AVAILABLE)) }),
};
