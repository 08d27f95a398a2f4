/**
 * Share group (KIP-932) scenarios, driven raw so each step is one request
 * both brokers answer: the share.version feature; group configs on the GROUP
 * resource; two members joining; records acquired under locks by one member
 * and not the other; ACCEPT, RELEASE and REJECT, a release redelivered with
 * its delivery count raised, another member's record refused
 * (INVALID_RECORD_STATE); the share session's epochs; the group as
 * ShareGroupDescribe, ListGroups and DescribeShareGroupOffsets see it; reset
 * and delete of its offsets once empty.
 *
 * Each record is produced as a batch of its own, so Kafka's batch-aligned
 * acquisition and the gateway's per-record one acquire the same offsets.
 * Epochs are observed relative to the first member's first one.
 */
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import type { RawConnection } from '../../support/raw-connection.js';
import { code, type Scenario } from '../harness.js';
import { awaitCoordinator, awaitLed, createTopicRaw, openRaw, rawProduce } from '../observe.js';

const MEMBER_A = '5a000000-0000-4000-8000-00000000000a';
const MEMBER_B = '5b000000-0000-4000-8000-00000000000b';
const RETRIABLE = new Set([14, 15, 16]);
const GROUP_RESOURCE = 32;
const T0 = 1_700_000_000_000;

async function heartbeat(raw: RawConnection, group: string, memberId: string, memberEpoch: number, topics: string[] | null): Promise<Message> {
  return raw.request(ApiKey.ShareGroupHeartbeat, 1, { groupId: group, memberId, memberEpoch, rackId: null, subscribedTopicNames: topics });
}

/** Sends until the answer is not a retriable coordinator error (Kafka may still be loading the group) and `accept` holds. */
async function until(send: () => Promise<Message>, accept: (a: Message) => boolean = () => true): Promise<Message> {
  let last: Message | null = null;
  for (let i = 0; i < 80; i++) {
    last = await send();
    if (!RETRIABLE.has(last.errorCode) && accept(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  return last!;
}

type Ack = { firstOffset: number; lastOffset: number; types: number[] };

function fetchRequest(group: string, memberId: string, epoch: number, topicId: string, acks: Ack[] = [], maxRecords = 3): Message {
  return {
    groupId: group, memberId, shareSessionEpoch: epoch, maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, maxRecords, batchSize: maxRecords,
    shareAcquireMode: 0, isRenewAck: false,
    topics: [{ topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: acks.map((a) => ({ firstOffset: BigInt(a.firstOffset), lastOffset: BigInt(a.lastOffset), acknowledgeTypes: a.types })) }] }],
    forgottenTopicsData: [],
  };
}

/** A ShareFetch answer: top-level error, lock time, and per partition the errors and acquired ranges. */
function fetchView(a: Message): Record<string, unknown> {
  const partitions = (a.responses as Message[]).flatMap((t) => t.partitions as Message[]);
  return {
    error: code(a.errorCode),
    lockMs: a.acquisitionLockTimeoutMs,
    partitions: partitions.map((p) => ({
      error: code(p.errorCode),
      ackError: code(p.acknowledgeErrorCode),
      acquired: (p.acquiredRecords as Message[]).map((r) => [Number(r.firstOffset), Number(r.lastOffset), r.deliveryCount]),
      hasRecords: p.records !== null && (p.records as Buffer[] | Buffer).length > 0,
    })),
  };
}

function acquiredOf(a: Message): number[][] {
  return (a.responses as Message[]).flatMap((t) => (t.partitions as Message[]).flatMap((p) => (p.acquiredRecords as Message[]).map((r) => [Number(r.firstOffset), Number(r.lastOffset), r.deliveryCount])));
}

async function acknowledge(raw: RawConnection, group: string, memberId: string, epoch: number, topicId: string, acks: Ack[]): Promise<Record<string, unknown>> {
  const a = await raw.request(ApiKey.ShareAcknowledge, 1, {
    groupId: group, memberId, shareSessionEpoch: epoch, isRenewAck: false,
    topics: [{ topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: acks.map((b) => ({ firstOffset: BigInt(b.firstOffset), lastOffset: BigInt(b.lastOffset), acknowledgeTypes: b.types })) }] }],
  });
  return { error: code(a.errorCode), partitions: (a.responses as Message[]).flatMap((t) => (t.partitions as Message[]).map((p) => code(p.errorCode))) };
}

async function offsets(raw: RawConnection, group: string, topic: string): Promise<unknown> {
  const d = await raw.request(ApiKey.DescribeShareGroupOffsets, 1, { groups: [{ groupId: group, topics: [{ topicName: topic, partitions: [0] }] }] });
  return (d.groups as Message[]).map((g) => ({
    error: code(g.errorCode),
    topics: (g.topics as Message[]).map((t) => ({ topic: t.topicName, partitions: (t.partitions as Message[]).map((p) => ({ startOffset: Number(p.startOffset), lag: Number(p.lag), error: code(p.errorCode) })) })),
  }));
}

// Long because it is one scenario's steps in order, each observed as it happens.
const acquireAndAcknowledge: Scenario = {
  name: 'share group (KIP-932): two members, locks, ACCEPT/RELEASE/REJECT, redelivery, describe, reset and delete',
  async run(ctx) {
    const topic = 'diff-share';
    const group = 'diff-share-group';
    const raw = await openRaw(ctx);
    try {
      const steps: Record<string, unknown> = {};
      const versions = await raw.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'diff', clientSoftwareVersion: '1' });
      steps.shareVersion = (versions.finalizedFeatures as Message[]).filter((f) => f.name === 'share.version').map((f) => [f.minVersionLevel, f.maxVersionLevel]);
      const created = await createTopicRaw(raw, topic, 1);
      if (created.errorCode !== 0) throw new Error(`creating ${topic} on ${ctx.target.name} answered ${code(created.errorCode)}`);
      await awaitLed(raw, topic, 1);
      for (let i = 0; i < 6; i++) await rawProduce(raw, topic, 0, buildBatch({ records: [{ key: null, value: `share-${i}`, timestamp: T0 + i }] }));
      await awaitCoordinator(raw, group);
      const configured = await raw.request(ApiKey.IncrementalAlterConfigs, 1, {
        resources: [{ resourceType: GROUP_RESOURCE, resourceName: group, configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }],
        validateOnly: false,
      });
      steps.configured = (configured.responses as Message[]).map((r) => code(r.errorCode));
      const badConfig = await raw.request(ApiKey.IncrementalAlterConfigs, 1, {
        resources: [{ resourceType: GROUP_RESOURCE, resourceName: group, configs: [{ name: 'share.delivery.count.limit', configOperation: 0, value: '1' }] }],
        validateOnly: true,
      });
      steps.badConfig = (badConfig.responses as Message[]).map((r) => code(r.errorCode));

      steps.noSubscription = code((await heartbeat(raw, group, MEMBER_A, 0, null)).errorCode);
      const a1 = await until(() => heartbeat(raw, group, MEMBER_A, 0, [topic]));
      const rel = (e: number) => (e > 0 ? e - a1.memberEpoch + 1 : e);
      // Kafka assigns asynchronously: the member heartbeats until its assignment names the partition.
      type Assignment = { topicPartitions: { topicId: string; partitions: number[] }[] } | null;
      const assigned = (h: Message) => ((h.assignment as Assignment)?.topicPartitions.length ?? 0) > 0;
      const a = assigned(a1) ? a1 : await until(() => heartbeat(raw, group, MEMBER_A, a1.memberEpoch, null), assigned);
      steps.aJoins = { error: code(a1.errorCode), epoch: rel(a1.memberEpoch), partitions: (a.assignment as Assignment)?.topicPartitions.map((t) => t.partitions) ?? null };
      const topicId = created.topicId;
      const b1 = await until(() => heartbeat(raw, group, MEMBER_B, 0, [topic]));
      steps.bJoins = { error: code(b1.errorCode), epoch: rel(b1.memberEpoch) };

      const aFetch = await until(() => raw.request(ApiKey.ShareFetch, 1, fetchRequest(group, MEMBER_A, 0, topicId)), (f) => f.errorCode !== 0 || acquiredOf(f).length > 0);
      steps.aFetches = fetchView(aFetch);
      const bFetch = await until(() => raw.request(ApiKey.ShareFetch, 1, fetchRequest(group, MEMBER_B, 0, topicId)), (f) => f.errorCode !== 0 || acquiredOf(f).length > 0);
      steps.bFetches = fetchView(bFetch);
      steps.wrongEpoch = fetchView(await raw.request(ApiKey.ShareFetch, 1, fetchRequest(group, MEMBER_A, 7, topicId)));
      steps.aAcknowledges = await acknowledge(raw, group, MEMBER_A, 1, topicId, [{ firstOffset: 0, lastOffset: 2, types: [1, 2, 3] }]);
      steps.aAcknowledgesB = await acknowledge(raw, group, MEMBER_A, 2, topicId, [{ firstOffset: 3, lastOffset: 3, types: [1] }]);
      const redelivered = await until(() => raw.request(ApiKey.ShareFetch, 1, fetchRequest(group, MEMBER_B, 1, topicId, [{ firstOffset: 3, lastOffset: 5, types: [1] }])), (f) => acquiredOf(f).length > 0);
      steps.bGetsReleased = acquiredOf(redelivered);
      steps.bClosesSession = await acknowledge(raw, group, MEMBER_B, -1, topicId, [{ firstOffset: 1, lastOffset: 1, types: [1] }]);
      // Kafka's start offset is read from its share coordinator, written after the acknowledgement: asked until it moves.
      let seen: unknown = null;
      for (let i = 0; i < 40 && JSON.stringify(seen).includes('"startOffset":6') === false; i++) {
        seen = await offsets(raw, group, topic);
        if (!JSON.stringify(seen).includes('"startOffset":6')) await new Promise((r) => setTimeout(r, 250));
      }
      steps.offsets = seen;

      const described = await raw.request(ApiKey.ShareGroupDescribe, 1, { groupIds: [group, 'diff-share-missing'], includeAuthorizedOperations: false });
      steps.describe = (described.groups as Message[]).map((g) => ({
        error: code(g.errorCode), state: g.groupState, groupEpoch: rel(g.groupEpoch), assignor: g.assignorName,
        members: (g.members as Message[]).map((m) => ({ memberId: m.memberId, epoch: rel(m.memberEpoch), subscribed: m.subscribedTopicNames })).sort((x, y) => String(x.memberId).localeCompare(String(y.memberId))),
      }));
      const listed = await raw.request(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: ['share'] });
      steps.list = (listed.groups as Message[]).filter((g) => String(g.groupId).startsWith('diff-share')).map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, state: g.groupState, type: g.groupType }));
      const notEmpty = await raw.request(ApiKey.AlterShareGroupOffsets, 0, { groupId: group, topics: [{ topicName: topic, partitions: [{ partitionIndex: 0, startOffset: 0n }] }] });
      steps.resetWhileMembers = code(notEmpty.errorCode);

      steps.aLeaves = rel((await heartbeat(raw, group, MEMBER_A, -1, null)).memberEpoch);
      steps.bLeaves = rel((await heartbeat(raw, group, MEMBER_B, -1, null)).memberEpoch);
      const reset = await until(() => raw.request(ApiKey.AlterShareGroupOffsets, 0, { groupId: group, topics: [{ topicName: topic, partitions: [{ partitionIndex: 0, startOffset: 0n }] }] }));
      steps.reset = { error: code(reset.errorCode), partitions: (reset.responses as Message[]).flatMap((t) => (t.partitions as Message[]).map((p) => code(p.errorCode))) };
      steps.offsetsAfterReset = await offsets(raw, group, topic);
      const deleted = await raw.request(ApiKey.DeleteShareGroupOffsets, 0, { groupId: group, topics: [{ topicName: topic }] });
      steps.deleteOffsets = { error: code(deleted.errorCode), topics: (deleted.responses as Message[]).map((t) => code(t.errorCode)) };
      return steps;
    } finally {
      raw.destroy();
    }
  },
};

export const SHARE_GROUP_SCENARIOS: Scenario[] = [acquireAndAcknowledge];
