// DescribeQuorum: the KRaft metadata quorum (`__cluster_metadata`, partition
// 0) as the gateways make it up. There is no Raft here: the store holds the
// metadata and every gateway reads it, so the live gateways (../brokers.ts)
// are the voters and all of them are caught up; the leader is the lowest live
// node id, the controller DescribeCluster names. There are no observers.
//
// Choices:
// - The high watermark, and every voter's log end offset, is the number of
//   topic partitions the core holds: the metadata the quorum would log here
//   is the topic catalogue, and that count grows as it does (one listQueues
//   call, what Metadata already makes). No voter lags, so the lag is 0.
// - The leader epoch is 0: no election ever happens (leadership is a
//   function of the live set), as partition leader epochs stay 0.
// - Timestamps: the leader's last fetch is -1 and its last caught-up time
//   now, as Kafka reports its leader; a follower is listed only while its
//   registry entry is live, so both of its times are now.
// - Kafka needs DESCRIBE on the cluster: without it the answer is
//   CLUSTER_AUTHORIZATION_FAILED. A partition other than
//   __cluster_metadata-0 is UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers.
//
// Versions: v1 adds the two timestamps; v2 adds error messages, each
// replica's directory id (the zero UUID: a gateway has no log directory of
// its own) and the voters' endpoints, given here as the listener the client
// came in on.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeQuorum } from '../../../protocol/messages/index.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { CLUSTER_NAME } from '../../access/acl-operations.js';
import { controllerOf, listedBrokers } from '../brokers.js';
import { NONE } from '../kafka-errors.js';
import { ZERO_UUID } from '../topics.js';

const METADATA_TOPIC = '__cluster_metadata';

const METADATA_PARTITION = 0;

async function quorumPartition(ctx: HandlerContext) {
  const brokers = listedBrokers(ctx);
  const leaderId = controllerOf(brokers);
  const catalogued = (await ctx.core.listQueues()).reduce((sum, queue) => sum + queue.partitions.length, 0);
  const now = Date.now();
  const voters = brokers.map((b) => ({
    replicaId: b.nodeId,
    replicaDirectoryId: ZERO_UUID,
    logEndOffset: catalogued,
    lastFetchTimestamp: b.nodeId === leaderId ? -1 : now,
    lastCaughtUpTimestamp: now,
  }));
  return {
    partition: { errorCode: NONE, errorMessage: null, leaderId, leaderEpoch: 0, highWatermark: catalogued, currentVoters: voters, observers: [] },
    nodes: brokers.map((b) => ({ nodeId: b.nodeId, listeners: [{ name: ctx.connection.listener, host: b.host, port: b.port }] })),
  };
}

export const describeQuorum: ApiHandler<typeof DescribeQuorum> = {
  api: DescribeQuorum,
  versions: '0-2',
  async handle(request, ctx) {
    if (!ctx.access.allows('DESCRIBE', 'CLUSTER', CLUSTER_NAME)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Describing the metadata quorum needs DESCRIBE on the cluster; ask an administrator for that ACL.', topics: [], nodes: [] };
    }
    const asksQuorum = request.topics.some((t) => t.topicName === METADATA_TOPIC && t.partitions.some((p) => p.partitionIndex === METADATA_PARTITION));
    const quorum = asksQuorum ? await quorumPartition(ctx) : null;
    const unknown = { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, leaderId: -1, leaderEpoch: -1, highWatermark: -1, currentVoters: [], observers: [] };
    return {
      errorCode: NONE,
      errorMessage: null,
      topics: request.topics.map((t) => ({
        topicName: t.topicName,
        partitions: t.partitions.map(({ partitionIndex }) =>
          quorum && t.topicName === METADATA_TOPIC && partitionIndex === METADATA_PARTITION
            ? { partitionIndex, ...quorum.partition }
            : { partitionIndex, ...unknown, errorMessage: `The metadata quorum is ${METADATA_TOPIC} partition ${METADATA_PARTITION}; ${t.topicName}-${partitionIndex} is not a quorum.` },
        ),
      })),
      nodes: quorum?.nodes ?? [],
    };
  },
};
