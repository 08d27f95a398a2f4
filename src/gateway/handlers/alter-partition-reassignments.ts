// AlterPartitionReassignments: moves partitions' replicas to other brokers.
//
// Choices:
// - Every partition lists one replica, this gateway, and the brokers Metadata
//   lists are this gateway alone. So the only target that can be met is
//   [nodeId], where the partition already is: it is answered as done at
//   once, as Kafka answers a move to the replicas a partition already has.
//   A target naming another broker, an empty list or a broker twice answers
//   INVALID_REPLICA_ASSIGNMENT (../replica-assignments.ts), as Kafka answers
//   a broker it has not registered.
// - Replicas null cancels a move; none is ever in progress, so it answers
//   NO_REASSIGNMENT_IN_PROGRESS.
// - Unknown topics and partitions answer UNKNOWN_TOPIC_OR_PARTITION.
//
// Versions: 0 only (flexible).
//
// ACLs: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { AlterPartitionReassignments } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { listedBrokers } from '../brokers.js';
import { replicaListProblem } from '../replica-assignments.js';
import { describeTopics, topicNameProblem } from '../topics.js';

type ReassignableTopic = RequestOf<typeof AlterPartitionReassignments>['topics'][number];

export const alterPartitionReassignments: ApiHandler<typeof AlterPartitionReassignments> = {
  api: AlterPartitionReassignments,
  versions: '0',
  async handle(request, ctx) {
    const asked: ReassignableTopic[] = request.topics;
    if (!ctx.access.allows('ALTER', 'CLUSTER', CLUSTER_NAME)) {
      return { throttleTimeMs: 0, errorCode: DENIED_CODE.CLUSTER, errorMessage: 'Not authorized to reassign partitions: it needs ALTER on the cluster.', responses: [] };
    }
    const queues = await describeTopics(ctx, asked.map((t) => t.name).filter((name) => topicNameProblem(name) === null));
    const brokerIds = listedBrokers(ctx).map((b) => b.nodeId);
    const responses = asked.map((t) => {
      const queue = queues.get(t.name) ?? null;
      return {
        name: t.name,
        partitions: t.partitions.map(({ partitionIndex, replicas }) => {
          const answer = (errorCode: number, errorMessage: string | null) => ({ partitionIndex, errorCode, errorMessage });
          if (!queue || !queue.partitions.some((p) => p.index === partitionIndex)) {
            return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Partition ${t.name}-${partitionIndex} does not exist.`);
          }
          if (replicas === null) return answer(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, `No reassignment is in progress for ${t.name}-${partitionIndex}.`);
          const problem = replicaListProblem(replicas, brokerIds);
          return problem ? answer(ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem) : answer(NONE, null);
        }),
      };
    });
    return { throttleTimeMs: 0, errorCode: NONE, errorMessage: null, responses };
  },
};
