/**
 * The share group calls of the Core (ShareGroupApi), checked and routed: the
 * membership calls and the admin calls are served by the core holding the
 * group's coordinator lease (as for the other group kinds); ShareFetch and
 * ShareAcknowledge by any core, since each share-partition's state is
 * decided under the engine's unit on it.
 */
import type { CallOptions } from '../../core.js';
import { CoreError } from '../../errors.js';
import { requireArray, requireInteger } from '../../rules/arguments.js';
import { validateGroupName, validateQueueName } from '../../rules/names.js';
import type { TopicMetadata } from '../consumer/types.js';
import type { ShareGroups } from './service.js';
import type { ShareAcknowledgement, ShareGroupApi, ShareGroupDescription, ShareGroupError, ShareGroupHeartbeatResult } from './types.js';

type Own = (group: string) => Promise<{ error: ShareGroupError } | object>;

function checkAcknowledgements(value: unknown): ShareAcknowledgement[] {
  return requireArray<ShareAcknowledgement>(value ?? [], 'acknowledgements').map((a, i) => ({
    queue: validateQueueName(a?.queue),
    partition: requireInteger(a.partition, `acknowledgements[${i}].partition`, 0),
    batches: requireArray<ShareAcknowledgement['batches'][number]>(a.batches, `acknowledgements[${i}].batches`).map((b, j) => ({
      firstOffset: requireInteger(b?.firstOffset, `acknowledgements[${i}].batches[${j}].firstOffset`, 0),
      lastOffset: requireInteger(b.lastOffset, `acknowledgements[${i}].batches[${j}].lastOffset`, 0),
      types: requireArray<number>(b.types, `acknowledgements[${i}].batches[${j}].types`).map((t) => requireInteger(t, 'acknowledge type', 0)),
    })),
  }));
}

export class ShareGroupCalls implements ShareGroupApi {
  constructor(
    private readonly service: ShareGroups,
    private readonly own: Own,
    private readonly topics: () => Promise<TopicMetadata[]>,
    /** Whether the group has members of another kind (classic or KIP-848). */
    private readonly otherKind: (group: string) => boolean,
  ) {}

  async shareGroupHeartbeat(req: Parameters<ShareGroupApi['shareGroupHeartbeat']>[0]): Promise<ShareGroupHeartbeatResult> {
    validateGroupName(req?.group);
    const held = await this.own(req.group);
    if ('error' in held) return { error: held.error, errorMessage: null, memberId: req.memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
    if (this.otherKind(req.group)) {
      return { error: 'group_id_not_found', errorMessage: `Group ${req.group} is not a share group.`, memberId: req.memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
    }
    // A name no topic can have is kept as Kafka keeps any unknown topic: subscribed, matching nothing (the core still refuses a name that is no string).
    const names = req.subscribedTopicNames === null ? null : requireArray<unknown>(req.subscribedTopicNames, 'subscribedTopicNames').map((t) => (typeof t === 'string' ? t : validateQueueName(t)));
    return this.service.heartbeat({ ...req, subscribedTopicNames: names });
  }

  async shareGroupDescribe(req: { groups: string[] }): Promise<{ groups: ShareGroupDescription[] }> {
    const groups: ShareGroupDescription[] = [];
    for (const group of requireArray<string>(req?.groups, 'groups')) {
      const held = await this.own(group);
      const described = await this.service.describe(group);
      if ('error' in held) groups.push({ ...described, error: held.error, errorMessage: null });
      else if (described.error === 'group_id_not_found' && (await this.service.hasState(group))) groups.push({ ...described, error: null, errorMessage: null, state: 'Empty' });
      else groups.push(described);
    }
    return { groups };
  }

  async shareFetch(req: Parameters<ShareGroupApi['shareFetch']>[0], options?: CallOptions) {
    validateGroupName(req?.group);
    if (typeof req.memberId !== 'string' || req.memberId === '') throw new CoreError('invalid_argument', 'memberId must be a non-empty string.');
    const partitions = requireArray<{ queue: string; partition: number }>(req.partitions, 'partitions').map((p, i) => ({ queue: validateQueueName(p?.queue), partition: requireInteger(p.partition, `partitions[${i}].partition`, 0) }));
    return this.service.fetch({
      group: req.group, memberId: req.memberId, acknowledgements: checkAcknowledgements(req.acknowledgements), partitions,
      maxRecords: requireInteger(req.maxRecords, 'maxRecords', 1), maxBytes: requireInteger(req.maxBytes, 'maxBytes', 1), maxWaitMs: requireInteger(req.maxWaitMs, 'maxWaitMs', 0),
    }, options?.signal);
  }

  async shareAcknowledge(req: Parameters<ShareGroupApi['shareAcknowledge']>[0]) {
    validateGroupName(req?.group);
    return this.service.acknowledge(req.group, String(req.memberId), checkAcknowledgements(req.acknowledgements));
  }

  async describeShareGroupOffsets(req: Parameters<ShareGroupApi['describeShareGroupOffsets']>[0]) {
    validateGroupName(req?.group);
    const held = await this.own(req.group);
    if ('error' in held) return { error: held.error, partitions: [] };
    if (!this.service.isShareGroup(req.group) && !(await this.service.hasState(req.group))) return { error: 'group_id_not_found' as const, partitions: [] };
    const partitions = req.partitions === null ? null : requireArray<{ queue: string; partition: number }>(req.partitions, 'partitions').map((p) => ({ queue: topicName(p?.queue), partition: requireInteger(p.partition, 'partition', 0) }));
    // A name no topic can have is a topic that does not exist, as Kafka answers it; only the others are looked up.
    const named = partitions?.filter((p) => isQueueName(p.queue)) ?? null;
    const described = await this.service.describeOffsets(req.group, named);
    if (partitions === null) return { error: null, partitions: described };
    return { error: null, partitions: partitions.map((p) => (isQueueName(p.queue) ? described[named!.indexOf(p)]! : { ...p, startOffset: -1, lag: -1, error: 'unknown_topic_or_partition' as const })) };
  }

  async alterShareGroupOffsets(req: Parameters<ShareGroupApi['alterShareGroupOffsets']>[0]) {
    validateGroupName(req?.group);
    const refused = await this.refuseAdmin(req.group);
    if (refused !== null) return { error: refused, partitions: [] };
    const known = new Map((await this.topics()).map((t) => [t.name, t.partitions]));
    const partitions = requireArray<{ queue: string; partition: number; startOffset: number }>(req.partitions, 'partitions').map((p) => ({
      queue: topicName(p?.queue), partition: requireInteger(p.partition, 'partition', 0), startOffset: requireInteger(p.startOffset, 'startOffset', 0),
    }));
    const valid = partitions.filter((p) => p.partition < (known.get(p.queue) ?? 0));
    await this.service.alterOffsets(req.group, valid);
    return { error: null, partitions: partitions.map((p) => ({ queue: p.queue, partition: p.partition, error: valid.includes(p) ? null : ('unknown_topic_or_partition' as const) })) };
  }

  async deleteShareGroupOffsets(req: Parameters<ShareGroupApi['deleteShareGroupOffsets']>[0]) {
    validateGroupName(req?.group);
    const refused = await this.refuseAdmin(req.group);
    if (refused !== null) return { error: refused, queues: [] };
    const known = new Set((await this.topics()).map((t) => t.name));
    const queues = requireArray<string>(req.queues, 'queues').map((q) => topicName(q));
    await this.service.deleteOffsets(req.group, queues.filter((q) => known.has(q)));
    return { error: null, queues: queues.map((queue) => ({ queue, error: known.has(queue) ? null : ('unknown_topic_or_partition' as const) })) };
  }

  async describeShareGroupConfig(req: { group: string }) {
    return this.service.config(validateGroupName(req?.group));
  }

  async alterShareGroupConfig(req: Parameters<ShareGroupApi['alterShareGroupConfig']>[0]) {
    return this.service.alterConfig(validateGroupName(req?.group), req.changes ?? {}, req.validateOnly === true);
  }

  /** Offsets of a share group change only while it is not held elsewhere and has no members, as Kafka's. */
  private async refuseAdmin(group: string): Promise<ShareGroupError | null> {
    const held = await this.own(group);
    if ('error' in held) return held.error;
    if (this.otherKind(group)) return 'group_id_not_found';
    return this.service.hasMembers(group) ? 'non_empty_group' : null;
  }
}

/** A topic name as a request gave it; one no topic can have is answered as an unknown topic, never refused whole. */
function topicName(name: unknown): string {
  if (typeof name !== 'string') return validateQueueName(name); // refused with the core's sentence
  return name;
}

function isQueueName(name: string): boolean {
  try {
    validateQueueName(name);
    return true;
  } catch {
    return false;
  }
}
