import type { TopicMetadata } from '../consumer/types.js';
import { STREAMS_STATUS, type InternalTopicToCreate, type StreamsGroupStatus, type Topology } from './types.js';

/**
 * What a streams group's topology needs of the topics as they are now (what
 * Kafka's streams group coordinator works out when it configures a topology):
 *
 * - every source topic must exist, and a source regex match at least one
 *   topic, or the group is told MISSING_SOURCE_TOPICS and no task runs;
 * - a repartition topic without a partition count takes the largest count of
 *   the subtopologies writing to it (their own sources), repeated until
 *   nothing changes; a copartition group's repartition topics take the
 *   group's count;
 * - topics of a copartition group must have as many partitions, and an
 *   existing internal topic the count the topology implies, or the group is
 *   told INCORRECTLY_PARTITIONED_TOPICS;
 * - internal topics (changelogs: one partition per task; repartition topics)
 *   that do not exist are to be created, with the configs the topology sends
 *   (a changelog's cleanup.policy=compact); until they are, the group is told
 *   MISSING_INTERNAL_TOPICS;
 * - each subtopology has one task per partition of its largest source.
 */
export interface ConfiguredTopology {
  status: StreamsGroupStatus[];
  toCreate: InternalTopicToCreate[];
  /** Subtopology id → task count; empty while the topology cannot run. */
  taskCounts: Map<string, number>;
  /** Subtopology id → the topics its tasks read (sources and repartition sources), for endpoint information. */
  inputs: Map<string, string[]>;
}

/** A source regex as Kafka matches it: the whole topic name. */
function matching(regex: string, topics: readonly TopicMetadata[]): string[] {
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${regex})$`);
  } catch {
    return [];
  }
  return topics.filter((t) => re.test(t.name)).map((t) => t.name);
}

// Long because it is one pass over the topology in Kafka's order: sources, repartition counts, copartitioning, internal topics, tasks.
export function configureTopology(topology: Topology, topics: readonly TopicMetadata[]): ConfiguredTopology {
  const counts = new Map(topics.map((t) => [t.name, t.partitions]));
  const status: StreamsGroupStatus[] = [];
  const inputs = new Map<string, string[]>();
  const missing: string[] = [];
  for (const s of topology.subtopologies) {
    for (const t of s.sourceTopics) if (!counts.has(t)) missing.push(t);
    const matched = s.sourceTopicRegex.flatMap((r) => {
      const names = matching(r, topics);
      if (names.length === 0) missing.push(r);
      return names;
    });
    inputs.set(s.subtopologyId, [...s.sourceTopics, ...matched, ...s.repartitionSourceTopics.map((t) => t.name)]);
  }
  if (missing.length > 0) {
    status.push({ statusCode: STREAMS_STATUS.MISSING_SOURCE_TOPICS, statusDetail: `Source topics ${[...new Set(missing)].sort().join(', ')} are missing.` });
    return { status, toCreate: [], taskCounts: new Map(), inputs };
  }
  // Repartition topics' partition counts: given, or from the subtopologies that write to them.
  const repartition = new Map<string, number>();
  for (const s of topology.subtopologies) for (const t of s.repartitionSourceTopics) if (t.partitions > 0) repartition.set(t.name, t.partitions);
  const sourceCount = (name: string) => repartition.get(name) ?? (topology.subtopologies.some((s) => s.repartitionSourceTopics.some((t) => t.name === name)) ? undefined : counts.get(name));
  for (let changed = true, rounds = 0; changed && rounds < 100; rounds++) {
    changed = false;
    for (const s of topology.subtopologies) {
      const own = inputs.get(s.subtopologyId)!.map(sourceCount).filter((n): n is number => n !== undefined);
      if (own.length === 0) continue;
      const max = Math.max(...own);
      for (const sink of s.repartitionSinkTopics) {
        if (!topology.subtopologies.some((o) => o.repartitionSourceTopics.some((t) => t.name === sink && t.partitions === 0))) continue;
        if ((repartition.get(sink) ?? 0) < max) {
          repartition.set(sink, max);
          changed = true;
        }
      }
    }
  }
  // Copartitioning: repartition topics follow the group; user topics must agree already.
  const badlyPartitioned: string[] = [];
  for (const s of topology.subtopologies) {
    for (const g of s.copartitionGroups) {
      const users = [...g.sourceTopics.map((i) => s.sourceTopics[i]!), ...g.sourceTopicRegex.flatMap((i) => matching(s.sourceTopicRegex[i]!, topics))];
      const internals = g.repartitionSourceTopics.map((i) => s.repartitionSourceTopics[i]!).filter((t) => t.partitions === 0).map((t) => t.name);
      const userCounts = new Set(users.map((t) => counts.get(t)!));
      if (userCounts.size > 1) badlyPartitioned.push(...users);
      const groupCount = userCounts.size > 0 ? Math.max(...userCounts) : Math.max(0, ...internals.map((t) => repartition.get(t) ?? 0));
      for (const t of internals) if (groupCount > 0) repartition.set(t, groupCount);
    }
  }
  const taskCounts = new Map<string, number>();
  for (const s of topology.subtopologies) {
    const n = Math.max(0, ...inputs.get(s.subtopologyId)!.map((t) => repartition.get(t) ?? counts.get(t) ?? 0));
    taskCounts.set(s.subtopologyId, n);
  }
  const toCreate: InternalTopicToCreate[] = [];
  const want = (name: string, partitions: number, configs: InternalTopicToCreate['configs']) => {
    const existing = counts.get(name);
    if (existing === undefined) toCreate.push({ name, partitions, configs });
    else if (existing !== partitions) badlyPartitioned.push(name);
  };
  for (const s of topology.subtopologies) {
    for (const t of s.repartitionSourceTopics) if (repartition.has(t.name)) want(t.name, repartition.get(t.name)!, t.topicConfigs);
    for (const t of s.stateChangelogTopics) want(t.name, t.partitions > 0 ? t.partitions : taskCounts.get(s.subtopologyId)!, t.topicConfigs);
  }
  if (badlyPartitioned.length > 0) {
    status.push({ statusCode: STREAMS_STATUS.INCORRECTLY_PARTITIONED_TOPICS, statusDetail: `Following topics do not have the same number of partitions: [${[...new Set(badlyPartitioned)].sort().join(', ')}]` });
    return { status, toCreate: [], taskCounts: new Map(), inputs };
  }
  if (toCreate.length > 0) {
    status.push({ statusCode: STREAMS_STATUS.MISSING_INTERNAL_TOPICS, statusDetail: `Internal topics are missing: [${toCreate.map((t) => t.name).sort().join(', ')}]` });
    return { status, toCreate, taskCounts: new Map(), inputs };
  }
  return { status, toCreate, taskCounts, inputs };
}
