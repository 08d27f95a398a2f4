/**
 * Cluster scenarios: Metadata and DescribeCluster as raw requests (every
 * field: cluster id present, controller, brokers, topic ids non-zero and
 * stable, partition fields, authorized operations when asked) and as kafkajs
 * and librdkafka show them.
 */
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { kafkajsClient } from '../../support/kafkajs.js';
import { connectProducer, disconnect } from '../../support/rdkafka.js';
import { code, type Normaliser, type Scenario } from '../harness.js';
import { awaitCoordinator, createTopicRaw, V, withRaw } from '../observe.js';

const ZERO = '00000000-0000-0000-0000-000000000000';

function partitionView(p: Message, n: Normaliser) {
  return {
    error: code(p.errorCode),
    partitionIndex: p.partitionIndex,
    leaderId: n.nodeId(p.leaderId),
    leaderEpoch: p.leaderEpoch,
    replicaNodes: (p.replicaNodes as number[]).map((id) => n.nodeId(id)),
    isrNodes: (p.isrNodes as number[]).map((id) => n.nodeId(id)),
    offlineReplicas: p.offlineReplicas,
  };
}

function metadataView(answer: Message, n: Normaliser) {
  return {
    brokers: (answer.brokers as Message[]).map((b) => ({ nodeId: n.nodeId(b.nodeId), host: n.host(b.host), port: n.port(b.port), rack: b.rack })),
    clusterId: n.clusterId(answer.clusterId),
    controllerId: n.nodeId(answer.controllerId),
    clusterAuthorizedOperations: answer.clusterAuthorizedOperations,
    topics: (answer.topics as Message[]).map((t) => ({
      error: code(t.errorCode),
      name: t.name,
      topicId: n.uuid(t.topicId),
      isInternal: t.isInternal,
      partitions: (t.partitions as Message[]).map((p) => partitionView(p, n)),
      topicAuthorizedOperations: t.topicAuthorizedOperations,
    })),
  };
}

const metadata: Scenario = {
  name: 'Metadata and DescribeCluster',
  async run(ctx) {
    const n = ctx.normalise;
    const topics = ['diff-meta-a', 'diff-meta-b'];
    return withRaw(ctx, async (raw) => {
      const createdIds: unknown[] = [];
      for (const [i, name] of topics.entries()) {
        const created = await createTopicRaw(raw, name, i + 1);
        createdIds.push({ name, topicId: n.uuid(created.topicId), error: code(created.errorCode) });
      }
      const ask = (names: (string | null)[], extra: Record<string, unknown> = {}, version: number = V.metadata) =>
        raw.request(ApiKey.Metadata, version, {
          topics: names.map((name) => ({ topicId: ZERO, name })),
          allowAutoTopicCreation: false,
          includeClusterAuthorizedOperations: false,
          includeTopicAuthorizedOperations: false,
          ...extra,
        });
      const plain = metadataView(await ask([...topics, 'diff-meta-missing']), n);
      const withOperations = metadataView(await ask([...topics, 'diff-meta-missing'], { includeTopicAuthorizedOperations: true }), n);
      // A group coordinator asked for: Kafka then keeps group offsets in its internal topic.
      await awaitCoordinator(raw, 'diff-meta-group');
      const everyTopic = await raw.request(ApiKey.Metadata, V.metadata, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      const partitionsDescribed = await raw.request(ApiKey.DescribeTopicPartitions, 0, { topics: [...topics, 'diff-meta-missing'].map((name) => ({ name })), responsePartitionLimit: 2000, cursor: null });
      const clusterOperationsV8 = metadataView(await ask([topics[0]!], { includeClusterAuthorizedOperations: true }, 8), n);
      // By id only: the ids learned above, and one no topic has.
      const idOf = (await ask([topics[0]!])).topics as Message[];
      const byId = metadataView(
        await raw.request(ApiKey.Metadata, V.metadata, {
          topics: [{ topicId: idOf[0]!.topicId, name: null }, { topicId: '0b1d3b1e-0000-4000-8000-000000000001', name: null }],
          allowAutoTopicCreation: false,
          includeTopicAuthorizedOperations: false,
        }),
        n,
      );
      const cluster = async (extra: Record<string, unknown>) => {
        const a = await raw.request(ApiKey.DescribeCluster, V.describeCluster, { includeClusterAuthorizedOperations: false, endpointType: 1, ...extra });
        return {
          error: code(a.errorCode),
          errorMessage: a.errorMessage === null ? null : '<text>',
          endpointType: a.endpointType,
          clusterId: n.clusterId(a.clusterId),
          controllerId: n.nodeId(a.controllerId),
          brokers: (a.brokers as Message[]).map((b) => ({ brokerId: n.nodeId(b.brokerId), host: n.host(b.host), port: n.port(b.port), rack: b.rack })),
          clusterAuthorizedOperations: a.clusterAuthorizedOperations,
        };
      };
      return {
        createdIds,
        plain,
        withOperations,
        groupOffsetsTopic: (everyTopic.topics as Message[]).filter((t) => t.name === '__consumer_offsets').map((t) => ({ name: t.name, isInternal: t.isInternal })),
        describeTopicPartitions: (partitionsDescribed.topics as Message[]).map((t) => ({
          error: code(t.errorCode),
          name: t.name,
          topicId: n.uuid(t.topicId),
          isInternal: t.isInternal,
          partitions: (t.partitions as Message[]).map((p) => ({ ...partitionView(p, n), eligibleLeaderReplicas: p.eligibleLeaderReplicas, lastKnownElr: p.lastKnownElr })),
          topicAuthorizedOperations: t.topicAuthorizedOperations,
        })),
        describeTopicPartitionsCursor: partitionsDescribed.nextCursor,
        clusterOperationsV8,
        byId,
        describeCluster: await cluster({}),
        describeClusterWithOperations: await cluster({ includeClusterAuthorizedOperations: true }),
        describeClusterControllers: await cluster({ endpointType: 2 }),
      };
    });
  },
};

const clientViews: Scenario = {
  name: 'cluster and topics as kafkajs and librdkafka show them',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-meta-clients';
    const admin = kafkajsClient(ctx.target.bootstrap, { clientId: 'queen-diff' }).admin();
    await admin.connect();
    let kafkajsView;
    try {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] });
      const described = await admin.describeCluster();
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      kafkajsView = {
        cluster: {
          clusterId: n.clusterId(described.clusterId),
          controller: n.nodeId(described.controller),
          brokers: described.brokers.map((b) => ({ nodeId: n.nodeId(b.nodeId), host: n.host(b.host), port: n.port(b.port) })),
        },
        topics: topics.map((t) => ({
          name: t.name,
          partitions: t.partitions
            .sort((a, b) => a.partitionId - b.partitionId)
            .map((p) => ({ ...p, leader: n.nodeId(p.leader), replicas: p.replicas.map((r) => n.nodeId(r)), isr: p.isr.map((r) => n.nodeId(r)) })),
        })),
        listed: (await admin.listTopics()).filter((t) => t === topic),
      };
    } finally {
      await admin.disconnect();
    }
    const producer = await connectProducer(ctx.target.bootstrap, {}, topic);
    let librdkafkaView;
    try {
      const meta = await new Promise<{ orig_broker_id: number; brokers: { id: number; host: string; port: number }[]; topics: { name: string; partitions: { id: number; leader: number; replicas: number[]; isrs: number[] }[] }[] }>((resolve, reject) =>
        producer.getMetadata({ topic, timeout: 10_000 }, (err, m) => (err ? reject(err) : resolve(m as never))),
      );
      librdkafkaView = {
        brokers: meta.brokers.map((b) => ({ id: n.nodeId(b.id), host: n.host(b.host), port: n.port(b.port) })),
        topics: meta.topics.filter((t) => t.name === topic).map((t) => ({
          name: t.name,
          partitions: t.partitions.sort((a, b) => a.id - b.id).map((p) => ({ id: p.id, leader: n.nodeId(p.leader), replicas: p.replicas.map((r) => n.nodeId(r)), isrs: p.isrs.map((r) => n.nodeId(r)) })),
        })),
      };
    } finally {
      await disconnect(producer);
    }
    return { kafkajs: kafkajsView, librdkafka: librdkafkaView };
  },
};

export const CLUSTER_SCENARIOS: Scenario[] = [metadata, clientViews];
