// ListPartitionReassignments: lists the partition moves in progress.
//
// Choices:
// - A move is never in progress here: the only target that can be met is
//   where a partition already is (./alter-partition-reassignments.ts), and
//   that completes at once. So the answer lists no topics, for every topic
//   asked about or for all (Topics null), as Kafka answers when nothing
//   moves.
//
// Versions: 0 only (flexible).
//
// ACLs: DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
import { ListPartitionReassignments } from '../../../protocol/messages/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const listPartitionReassignments: ApiHandler<typeof ListPartitionReassignments> = {
  api: ListPartitionReassignments,
  versions: '0',
  async handle(_request, ctx) {
    if (!ctx.access.allows('DESCRIBE', 'CLUSTER', CLUSTER_NAME)) {
      return { throttleTimeMs: 0, errorCode: DENIED_CODE.CLUSTER, errorMessage: 'Not authorized to list partition reassignments: it needs DESCRIBE on the cluster.', topics: [] };
    }
    return { throttleTimeMs: 0, errorCode: NONE, errorMessage: null, topics: [] };
  },
};
