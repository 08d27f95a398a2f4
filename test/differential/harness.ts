/**
 * The differential harness: one scenario, driven by real clients (and raw
 * requests where no client can express it), runs against Apache Kafka and
 * against the gateway on the memory and PostgreSQL engines; each run returns
 * an observation (a plain object of everything a user would notice: error
 * codes, offsets, fields), and the gateway's observations are compared with
 * Kafka's field by field.
 *
 * A field that differs fails the test unless ./differences.ts lists it (with
 * the reason, which docs/differences.md ("Differences from Apache Kafka")
 * repeats); a listed difference that no longer occurs fails too, so the table
 * stays true.
 *
 * What is normalised, and only this, because it cannot be equal between two
 * clusters: the cluster id, UUIDs (topic ids, the UUID part of member ids),
 * timestamps taken from the server's clock, the broker's node id and port.
 * Each goes through a method of `Normaliser` that checks what can be checked
 * (present, non-zero, within the scenario's time window, the broker's own id)
 * before replacing the value with a marker, so a wrong value still differs.
 * UUIDs become numbered markers per run (<uuid#1>, <uuid#2>, ...), so "the
 * same id twice" and "two different ids" stay comparable.
 */
import { errorName } from '../../protocol/error-codes.js';
import { DELIBERATE_DIFFERENCES, type DeliberateDifference } from './differences.js';

export type TargetName = 'kafka' | 'memory' | 'postgres';

/** A broker a scenario runs against: Apache Kafka or a gateway. */
export interface Target {
  name: TargetName;
  bootstrap: string;
  host: string;
  port: number;
  /** The broker's node id, as its Metadata answers it. */
  nodeId: number;
}

export type Observation = Record<string, unknown>;

export interface ScenarioContext {
  target: Target;
  normalise: Normaliser;
}

export interface Scenario {
  /** Unique within a test file; names the topics and groups the scenario uses on each broker. */
  name: string;
  run(ctx: ScenarioContext): Promise<Observation>;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** Slack around the scenario's window for a server timestamp: clocks are the same machine's. */
const CLOCK_SLACK_MS = 2_000;

export class Normaliser {
  private readonly uuids = new Map<string, string>();
  readonly startedAt = Date.now();

  constructor(private readonly target: Target) {}

  /** A UUID as a numbered marker: equal ids get equal markers, the zero UUID stays itself. */
  uuid(value: unknown): unknown {
    if (typeof value !== 'string') return value;
    if (value === ZERO_UUID) return value;
    let marker = this.uuids.get(value);
    if (!marker) this.uuids.set(value, (marker = `<uuid#${this.uuids.size + 1}>`));
    return marker;
  }

  /** Every UUID inside a text (member ids are `<client id>-<uuid>` on both) replaced by its marker. */
  text(value: unknown): unknown {
    if (typeof value !== 'string') return value;
    return value.replace(UUID, (id) => this.uuid(id.toLowerCase()) as string);
  }

  /** A cluster id: present and non-empty is all two clusters can share. */
  clusterId(value: unknown): unknown {
    return typeof value === 'string' && value.length > 0 ? '<cluster-id>' : value;
  }

  /** A timestamp from the server's clock: within the scenario's window, else left as it is to show. */
  serverTime(value: unknown): unknown {
    const n = typeof value === 'bigint' ? Number(value) : value;
    if (typeof n !== 'number' || n < 0) return value;
    return n >= this.startedAt - CLOCK_SLACK_MS && n <= Date.now() + CLOCK_SLACK_MS ? '<server-time>' : n;
  }

  /** The broker's own node id as a marker; any other id shows. */
  nodeId(value: unknown): unknown {
    return value === this.target.nodeId ? '<node-id>' : value;
  }

  /** The broker's own port as a marker; any other port shows. */
  port(value: unknown): unknown {
    return value === this.target.port ? '<port>' : value;
  }

  /** The broker's own host as a marker (both listen on 127.0.0.1, but say what it is). */
  host(value: unknown): unknown {
    return value === this.target.host ? '<host>' : value;
  }
}

/** An error code as its name and number, so observations read as Kafka's errors. */
export function code(n: number | null | undefined): string {
  if (n === null || n === undefined) return String(n);
  return n === 0 ? 'NONE' : `${errorName(n)} (${n})`;
}

/** Runs a scenario against one target with a fresh normaliser. */
export async function observe(scenario: Scenario, target: Target): Promise<Observation> {
  return scenario.run({ target, normalise: new Normaliser(target) });
}

// ─── Comparison ──────────────────────────────────────────────────────────────

export interface FieldDifference {
  path: string;
  reference: unknown;
  candidate: unknown;
}

export function show(value: unknown): string {
  if (value === undefined) return '(absent)';
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : Buffer.isBuffer(v) ? `<${v.length} bytes>` : v));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/** Every leaf where the two differ, by path (`a.b[2].c`); arrays compare index by index, with their lengths. */
export function diffObservations(reference: unknown, candidate: unknown, path = ''): FieldDifference[] {
  if (Array.isArray(reference) && Array.isArray(candidate)) {
    const out: FieldDifference[] = [];
    if (reference.length !== candidate.length) out.push({ path: `${path}.length`, reference: reference.length, candidate: candidate.length });
    for (let i = 0; i < Math.min(reference.length, candidate.length); i++) out.push(...diffObservations(reference[i], candidate[i], `${path}[${i}]`));
    return out;
  }
  if (isPlainObject(reference) && isPlainObject(candidate)) {
    const out: FieldDifference[] = [];
    for (const key of new Set([...Object.keys(reference), ...Object.keys(candidate)])) {
      out.push(...diffObservations(reference[key], candidate[key], path === '' ? key : `${path}.${key}`));
    }
    return out;
  }
  if (Buffer.isBuffer(reference) && Buffer.isBuffer(candidate)) {
    return reference.equals(candidate) ? [] : [{ path, reference, candidate }];
  }
  return Object.is(reference, candidate) || show(reference) === show(candidate) ? [] : [{ path, reference, candidate }];
}

/** A path pattern: `*` stands for one path segment or array index, `**` for any rest. */
function pathMatches(pattern: string, path: string): boolean {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\\\[\*\\\]/g, '\\[\\d+\\]');
  const regex = escaped.replace(/\*\*/g, '\u0000').replace(/\*/g, '[^.[]+').replace(/\u0000/g, '.*');
  return new RegExp(`^${regex}$`).test(path);
}

export interface Verdict {
  /** Differences no entry of the table explains: each fails the test. */
  unexplained: FieldDifference[];
  /** Table entries for this scenario that matched at least one difference. */
  explained: DeliberateDifference[];
  /** Table entries for this scenario and engine that matched nothing: the table is out of date. */
  stale: DeliberateDifference[];
}

/**
 * Compares a gateway's observation with Kafka's and sorts each difference
 * into explained (listed in the table) or unexplained.
 */
export function judge(scenario: string, engine: TargetName, reference: Observation, candidate: Observation, table: readonly DeliberateDifference[] = DELIBERATE_DIFFERENCES): Verdict {
  const entries = table.filter((d) => d.scenario === scenario && (d.engines === undefined || d.engines.includes(engine)));
  const differences = diffObservations(reference, candidate);
  const matched = new Set<DeliberateDifference>();
  const unexplained: FieldDifference[] = [];
  for (const d of differences) {
    const entry = entries.find((e) => e.paths.some((p) => pathMatches(p, d.path)));
    if (entry) matched.add(entry);
    else unexplained.push(d);
  }
  return { unexplained, explained: [...matched], stale: entries.filter((e) => !matched.has(e)) };
}

/** The verdict as the sentence a failing test prints. */
export function describeVerdict(scenario: string, engine: TargetName, verdict: Verdict): string {
  const lines: string[] = [];
  if (verdict.unexplained.length > 0) {
    lines.push(`scenario "${scenario}": the gateway (${engine} engine) differs from Apache Kafka in ${verdict.unexplained.length} field(s) not listed in test/differential/differences.ts:`);
    for (const d of verdict.unexplained.slice(0, 40)) lines.push(`  ${d.path}: Kafka ${show(d.reference)}, gateway ${show(d.candidate)}`);
    lines.push('Fix the gateway, or list the difference with its reason in differences.ts and the table in docs/differences.md.');
  }
  for (const s of verdict.stale) {
    lines.push(`scenario "${scenario}": the listed difference "${s.behaviour}" (${s.paths.join(', ')}) no longer occurs on the ${engine} engine; remove it from differences.ts and the table in docs/differences.md.`);
  }
  return lines.join('\n');
}
