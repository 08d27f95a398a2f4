/**
 * Authorization codes on the wire, read straight from the responses (the
 * codes kafkajs hides behind its own errors), and client quotas: a producer
 * over its produce byte rate gets throttle_time_ms and is held to the rate;
 * DescribeClientQuotas and AlterClientQuotas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { buildBatch } from '../../protocol/records/record-batch.js';
import type { Message } from '../../protocol/codec/compile.js';
import { startBroker, type Broker } from '../../src/index.js';
import { WireClient } from '../gateway/wire-client.js';

describe('authorization codes on the wire, for a principal without ACLs (User:ANONYMOUS)', () => {
  let broker: Broker;
  let wire: WireClient;
  const topic = 'guarded';
  beforeAll(async () => {
    broker = await startBroker({ autoCreateTopics: true, authorization: { enabled: true, superUsers: ['User:admin'] } });
    await broker.core.createQueue({ name: topic, partitions: 1, config: { dedupWindowSeconds: 0, fixedPartitionCount: true } });
    wire = await WireClient.open(broker.port);
  });
  afterAll(async () => {
    wire?.destroy();
    await broker?.stop();
  });

  it('answers each API with the code Kafka answers, and shows no topic', async () => {
    const metadataAll = await wire.request(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
    expect(metadataAll.topics).toEqual([]);
    const named = await wire.request(ApiKey.Metadata, 12, { topics: [{ name: topic, topicId: '00000000-0000-0000-0000-000000000000' }, { name: 'nowhere', topicId: '00000000-0000-0000-0000-000000000000' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
    // Existing or not: the same code, so a name's existence does not leak; and nothing is auto-created.
    expect(named.topics.map((t: { errorCode: number }) => t.errorCode)).toEqual([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(await broker.core.describeQueue({ name: 'nowhere' })).toBeNull();

    const coordinator = await wire.request(ApiKey.FindCoordinator, 3, { key: 'some-group', keyType: 0 });
    expect(coordinator.errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const txnCoordinator = await wire.request(ApiKey.FindCoordinator, 3, { key: 'some-txn', keyType: 1 });
    expect(txnCoordinator.errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    const offsets = await wire.request(ApiKey.OffsetFetch, 7, { groupId: 'some-group', topics: null, requireStable: false });
    expect(offsets.errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const join = await wire.request(ApiKey.JoinGroup, 5, { groupId: 'some-group', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] });
    expect(join.errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);

    const created = await wire.request(ApiKey.CreateTopics, 7, { topics: [{ name: 'mine', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5_000, validateOnly: false });
    expect(created.topics[0].errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const init = await wire.request(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const produced = await wire.request(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: 'x' }] }) }] }] });
    expect(produced.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const fetched = await wire.request(ApiKey.Fetch, 12, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '' });
    expect(fetched.responses[0].partitions[0].errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const acls = await wire.request(ApiKey.DescribeAcls, 3, { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 });
    expect(acls.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const quotas = await wire.request(ApiKey.AlterClientQuotas, 1, { entries: [{ entity: [{ entityType: 'user', entityName: null }], ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] }], validateOnly: false });
    expect(quotas.entries[0].errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect((await broker.core.offsets({ partitions: [{ queue: topic, partition: 0 }] })).partitions[0]!.highWatermark).toBe(0);
  });

  it('answers the transactional APIs TRANSACTIONAL_ID_AUTHORIZATION_FAILED without WRITE on the id, and lists no transaction it may not describe', async () => {
    await broker.core.initProducer({ transactionalId: 'tx-guarded', transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
    const denied = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    const ids = { producerId: 1n, producerEpoch: 0 };
    expect((await wire.request(ApiKey.InitProducerId, 4, { transactionalId: 'tx-guarded', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })).errorCode).toBe(denied);
    const added = await wire.request(ApiKey.AddPartitionsToTxn, 3, { v3AndBelowTransactionalId: 'tx-guarded', v3AndBelowProducerId: 1n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: topic, partitions: [0] }] });
    expect(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).toBe(denied);
    expect((await wire.request(ApiKey.AddOffsetsToTxn, 3, { transactionalId: 'tx-guarded', ...ids, groupId: 'some-group' })).errorCode).toBe(denied);
    const offsets = await wire.request(ApiKey.TxnOffsetCommit, 3, { transactionalId: 'tx-guarded', groupId: 'some-group', ...ids, generationId: -1, memberId: '', groupInstanceId: null, topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    expect(offsets.topics[0].partitions[0].errorCode).toBe(denied);
    expect((await wire.request(ApiKey.EndTxn, 3, { transactionalId: 'tx-guarded', ...ids, committed: true })).errorCode).toBe(denied);
    const described = await wire.request(ApiKey.DescribeTransactions, 0, { transactionalIds: ['tx-guarded'] });
    expect(described.transactionStates[0]).toMatchObject({ errorCode: denied, transactionState: '' });
    expect((await wire.request(ApiKey.ListTransactions, 1, { stateFilters: [], producerIdFilters: [], durationFilter: -1n })).transactionStates).toEqual([]);
    // The core has the id all along: what was refused is this principal.
    expect((await broker.core.listTransactions({ states: [], producerIds: [], minDurationMs: -1 })).transactions.map((t) => t.transactionalId)).toContain('tx-guarded');
  });

  it('answers a principal the ACLs allow, once they are in the core', async () => {
    await broker.core.createAcls({ bindings: [{ resourceType: 'TOPIC', resourceName: topic, patternType: 'LITERAL', principal: 'User:ANONYMOUS', host: '127.0.0.1', operation: 'WRITE', permission: 'ALLOW' }] });
    // Another gateway's change: this one sees it at its next refresh; ask for it now.
    const produceOnce = () => wire.request(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch({ records: [{ key: null, value: 'x' }] }) }] }] });
    let code = -1;
    for (let i = 0; i < 100 && code !== 0; i++) {
      code = (await produceOnce()).responses[0].partitionResponses[0].errorCode;
      if (code !== 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(code).toBe(0);
    // WRITE implies DESCRIBE: the topic is visible now, with what it may do.
    const metadata = await wire.request(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
    expect(metadata.topics.map((t: { name: string }) => t.name)).toEqual([topic]);
    expect(metadata.topics[0].topicAuthorizedOperations).toBe((1 << 4) | (1 << 8)); // WRITE, DESCRIBE
  }, 20_000);
});

describe('client quotas', () => {
  let broker: Broker;
  let wire: WireClient;
  const WINDOW_MS = 100;
  const SAMPLES = 11;
  const QUOTA = 20_000; // bytes/s
  beforeAll(async () => {
    broker = await startBroker({ autoCreateTopics: true, quotas: { windowMs: WINDOW_MS, samples: SAMPLES } });
    await broker.core.createQueue({ name: 'metered', partitions: 1, config: { dedupWindowSeconds: 0, fixedPartitionCount: true } });
    wire = await WireClient.open(broker.port);
  });
  afterAll(async () => {
    wire?.destroy();
    await broker?.stop();
  });

  it('stores quotas through AlterClientQuotas and lists them through DescribeClientQuotas', async () => {
    const altered = await wire.request(ApiKey.AlterClientQuotas, 1, {
      entries: [
        { entity: [{ entityType: 'client-id', entityName: 'gateway-test' }], ops: [{ key: 'producer_byte_rate', value: QUOTA, remove: false }] },
        { entity: [{ entityType: 'user', entityName: null }], ops: [{ key: 'consumer_byte_rate', value: 1e9, remove: false }] },
        { entity: [{ entityType: 'ip', entityName: '10.0.0.1' }], ops: [{ key: 'connection_creation_rate', value: 5, remove: false }] },
        { entity: [{ entityType: 'user', entityName: 'x' }], ops: [{ key: 'producer_byte_rate', value: -5, remove: false }] },
      ],
      validateOnly: false,
    });
    expect(altered.entries.map((e: { errorCode: number }) => e.errorCode)).toEqual([0, 0, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    expect(altered.entries[3].errorMessage).toMatch(/above 0/);
    const described = await wire.request(ApiKey.DescribeClientQuotas, 1, { components: [{ entityType: 'client-id', matchType: 0, match: 'gateway-test' }], strict: true });
    expect(described.errorCode).toBe(0);
    expect(described.entries).toEqual([{ entity: [{ entityType: 'client-id', entityName: 'gateway-test' }], values: [{ key: 'producer_byte_rate', value: QUOTA }] }]);
    const defaults = await wire.request(ApiKey.DescribeClientQuotas, 1, { components: [{ entityType: 'user', matchType: 1, match: null }], strict: false });
    expect(defaults.entries).toEqual([{ entity: [{ entityType: 'user', entityName: null }], values: [{ key: 'consumer_byte_rate', value: 1e9 }] }]);
  });

  it('throttles a producer over its byte rate: throttle_time_ms in the answers, and bytes per window held near the quota', async () => {
    const value = 'v'.repeat(4_000);
    const batch = () => buildBatch({ records: [{ key: null, value }] });
    const size = batch().length;
    const answers: { at: number; throttleTimeMs: number; bytes: number }[] = [];
    const requests = 24;
    for (let i = 0; i < requests; i++) {
      const body: Message = { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: 'metered', partitionData: [{ index: 0, records: batch() }] }] };
      const answer = await wire.request(ApiKey.Produce, 9, body, 30_000);
      expect(answer.responses[0].partitionResponses[0].errorCode).toBe(0);
      answers.push({ at: Date.now(), throttleTimeMs: answer.throttleTimeMs, bytes: size });
    }
    // Within the first window's allowance nothing is throttled; past it, answers say how long to wait.
    expect(answers[0]!.throttleTimeMs).toBe(0);
    const throttled = answers.filter((a) => a.throttleTimeMs > 0);
    expect(throttled.length).toBeGreaterThan(requests / 2);
    expect(Math.max(...throttled.map((a) => a.throttleTimeMs))).toBeLessThanOrEqual(WINDOW_MS * SAMPLES);
    // Bytes stored by each answer never run ahead of what the quota allows since the first one:
    // the rate over the measuring span (at least samples-1 windows), plus one request in flight.
    const start = answers[0]!.at;
    const span = (SAMPLES - 1) * WINDOW_MS;
    let stored = 0;
    for (const a of answers) {
      stored += a.bytes;
      expect(stored).toBeLessThanOrEqual((QUOTA * (a.at - start + span)) / 1000 + 2 * size);
    }
    // And the producer is not starved: over the whole run it moved at least half the quota.
    const elapsed = answers.at(-1)!.at - start;
    expect((stored - QUOTA * (span / 1000)) / (elapsed / 1000)).toBeGreaterThan(QUOTA / 2);
    expect((await broker.core.offsets({ partitions: [{ queue: 'metered', partition: 0 }] })).partitions[0]!.highWatermark).toBe(requests);
  }, 60_000);
});
