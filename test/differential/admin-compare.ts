/**
 * The admin differential tests' comparison: an observation (what a client
 * sees of one scenario: error codes, config names, values, sources, flags,
 * partition counts, replica lists) is flattened into field paths, and the
 * gateway's is held against Apache Kafka's field by field. A field may differ
 * only where DELIBERATE_DIFFERENCES names it, with the reason; docs/differences.md
 * "Differences from Apache Kafka" says the same to users.
 *
 * Kept apart from the data-plane harness (test/differential on branch
 * diff-data) on purpose: admin answers are compared as values, not as streams.
 */

/** One field that is allowed to differ, and why. `field` matches a flattened path (see `flatten`). */
export interface DeliberateDifference {
  /** The scenario it applies to, or '*' for a difference any scenario may show. */
  scenario: string;
  field: RegExp;
  reason: string;
}

/**
 * Every difference the gateway keeps on purpose. A row that no longer matches
 * any difference fails the test (see `compareWithKafka`), so the table cannot
 * outlive the behaviour it excuses.
 */
export const DELIBERATE_DIFFERENCES: readonly DeliberateDifference[] = [
  {
    scenario: 'replication factor 3',
    field: /^(errorCode|numPartitions|replicationFactor|metadata\..*|librdkafka)$/,
    reason: 'Kafka with one broker cannot place 3 replicas (INVALID_REPLICATION_FACTOR); the gateway takes it, since durability is the core\'s, not copies on brokers, and lists the one replica it has.',
  },
  {
    scenario: '*',
    field: /(^|\.)queen\.dedup\.window\.seconds\./,
    reason: 'queen.dedup.window.seconds is not a Kafka config: Queen\'s native dedup window, shown read-only so a Kafka admin can see it.',
  },
  {
    scenario: '*',
    field: /(^|\.)min\.insync\.replicas\.(configSource|synonyms)/,
    reason: 'Kafka 4.4 formats its storage with a cluster-wide dynamic min.insync.replicas=1 (source DYNAMIC_DEFAULT_BROKER_CONFIG); the gateway has no dynamic broker configs, so the same value is the built-in default.',
  },
  {
    scenario: 'incremental alter configs',
    field: /^unknown operation$/,
    reason: 'An operation code IncrementalAlterConfigs does not define: Kafka fails with UNKNOWN_SERVER_ERROR; the gateway answers INVALID_REQUEST naming the four operations.',
  },
  {
    scenario: "Kafka's own tools",
    field: /^threeReplicas\./,
    reason: 'kafka-topics.sh --create --replication-factor 3: a one-broker Kafka fails; the gateway creates the topic (see "replication factor 3").',
  },
  {
    scenario: "Kafka's own tools",
    field: /^described\.Configs$/,
    reason: 'kafka-topics.sh --describe lists min.insync.replicas=1 on Kafka 4.4, set cluster-wide when its storage is formatted; the gateway has no dynamic broker configs, so nothing is set.',
  },
  {
    scenario: 'broker configs',
    field: /^configs\.[^.]+(\.[^.]+)*\.readOnly$/,
    reason: 'Broker configs are fixed when the gateway starts (flags and environment), so every one is read-only; Kafka can change some dynamically.',
  },
  {
    scenario: 'incremental alter configs',
    field: /^unknown operation$/,
    reason: 'An operation code IncrementalAlterConfigs does not define: Kafka fails with UNKNOWN_SERVER_ERROR; the gateway answers INVALID_REQUEST naming the four operations.',
  },
  {
    scenario: 'broker configs',
    field: /^configs\.(num\.partitions|auto\.create\.topics\.enable|broker\.id)\.(configSource|synonyms.*)$/,
    reason: 'The gateway reports values from its own settings as static broker configs with no built-in default beside them; Kafka\'s reference broker sets some of these in server.properties and not others.',
  },
  {
    scenario: 'broker config changes',
    field: /^(clusterDefault|thisBroker)\.errorCode$/,
    reason: 'Broker configs are fixed when the gateway starts (INVALID_REQUEST saying so); Kafka changes log.retention.ms and other dynamic broker configs at run time. Set them per topic instead.',
  },
];

export type Observation = Record<string, unknown>;

/** Flattens an observation into `path -> value`, arrays of named things keyed by name so order does not matter. */
export function flatten(value: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (Array.isArray(value)) {
    const named = value.every((v) => v && typeof v === 'object' && typeof (v as { name?: unknown }).name === 'string');
    if (named && value.length > 0) {
      for (const v of value) flatten(v, `${path}${path ? '.' : ''}${(v as { name: string }).name}`, out);
    } else {
      out.set(path, JSON.stringify(value));
    }
    return out;
  }
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'name') continue;
      flatten(v, `${path}${path ? '.' : ''}${k}`, out);
    }
    return out;
  }
  out.set(path, typeof value === 'bigint' ? String(value) : value);
  return out;
}

export interface Mismatch {
  field: string;
  kafka: unknown;
  gateway: unknown;
}

/** The fields where the gateway's observation differs from Kafka's. */
export function mismatches(kafka: Observation, gateway: Observation): Mismatch[] {
  const k = flatten(kafka);
  const g = flatten(gateway);
  const fields = [...new Set([...k.keys(), ...g.keys()])].sort();
  return fields.filter((f) => k.get(f) !== g.get(f)).map((field) => ({ field, kafka: k.get(field), gateway: g.get(field) }));
}

/**
 * Splits the differences of one scenario into those the table excuses and
 * those it does not; also answers the table's rows for this scenario that
 * excused nothing (stale rows).
 */
export function compareWithKafka(scenario: string, kafka: Observation, gateway: Observation) {
  const own = DELIBERATE_DIFFERENCES.filter((d) => d.scenario === scenario);
  const rows = [...own, ...DELIBERATE_DIFFERENCES.filter((d) => d.scenario === '*')];
  const found = mismatches(kafka, gateway);
  const excused = found.filter((m) => rows.some((r) => r.field.test(m.field)));
  const unexcused = found.filter((m) => !rows.some((r) => r.field.test(m.field)));
  const stale = own.filter((r) => !found.some((m) => r.field.test(m.field))).map((r) => r.field.source);
  return { excused, unexcused, stale };
}
