/**
 * Consumer-group members for the group suites, driven through librdkafka
 * (@confluentinc/kafka-javascript's KafkaConsumer): subscribe with the
 * binding's rebalance callback (it assigns, or incrementally assigns under
 * cooperative-sticky, and emits the event this class records with its time),
 * a consume loop that keeps every record of the partitions it owns, and a
 * commit after each batch: asynchronous, synchronous, or none.
 *
 * A member runs in this process (`startMember`) or in a child process
 * (`spawnMembers`, through ./groups-member-process.ts) so that a test can
 * SIGKILL it, and so that a synchronous commit, which blocks the calling
 * thread until the broker answers, never blocks an in-process gateway.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { KafkaConsumer as KafkaConsumerType, LibrdKafkaError, Message, TopicPartition } from '@confluentinc/kafka-javascript';
import { sleep, waitFor } from './eventually.js';
import { connectProducer, disconnect, expectDelivered, produceAll, type ProducerConfig } from './rdkafka.js';
import { sequencedValue, type SentRecord } from './records.js';

const { KafkaConsumer, CODES } = KafkaJavascript;

export type Assignor = 'range' | 'roundrobin' | 'cooperative-sticky';
/**
 * 'ordered': asynchronous with at most one commit outstanding; positions read meanwhile
 * wait and go in the next one. librdkafka retries a commit that failed retriably (a
 * coordinator error, a lost connection) after its backoff, so with several outstanding a
 * retried older commit can land after a newer one (against Apache Kafka too); Kafka's Java
 * consumer never retries asynchronous commits for that reason.
 */
export type CommitMode = 'async' | 'ordered' | 'sync' | 'none';

export interface MemberOptions {
  bootstrap: string;
  group: string;
  topic: string;
  /** Names the member in failure messages and its client.id. */
  name: string;
  assignor?: Assignor;
  /** group.instance.id: a static member. */
  instanceId?: string;
  /** Default 6000 ms, the coordinator's minimum. */
  sessionTimeoutMs?: number;
  /** Short by default (250 ms) so members hear of a rebalance quickly. */
  heartbeatIntervalMs?: number;
  /** How the member commits what it consumed, after each batch. Default async. */
  commit?: CommitMode;
  /**
   * group.protocol: 'consumer' is KIP-848's, where the coordinator assigns
   * (`remoteAssignor`, group.remote.assignor) and the session and heartbeat
   * settings are the coordinator's, not the client's. Default 'classic'.
   */
  groupProtocol?: 'classic' | 'consumer';
  remoteAssignor?: 'uniform' | 'range';
  /** librdkafka's debug contexts (e.g. 'protocol,cgrp'); their lines go to the member's `onLog`. */
  debug?: string;
}

export interface RebalanceEvent {
  kind: 'assigned' | 'revoked';
  partitions: number[];
  /** Date.now() when the callback ran. */
  at: number;
}

/** A record as a member saw it: partition, offset, value. */
export interface MemberRecord {
  partition: number;
  offset: number;
  value: string;
}

/** What every member (in-process or child) exposes to a test. */
export interface MemberView {
  readonly name: string;
  readonly records: MemberRecord[];
  readonly events: RebalanceEvent[];
  /** Partitions assigned now. */
  readonly assigned: ReadonlySet<number>;
  /** Offsets the broker acknowledged as committed, per partition (the next offset to read). */
  readonly committed: ReadonlyMap<number, number>;
  readonly errors: string[];
}

export function consumerConfig(options: MemberOptions): Record<string, unknown> {
  const membership =
    options.groupProtocol === 'consumer'
      ? { 'group.protocol': 'consumer', ...(options.remoteAssignor ? { 'group.remote.assignor': options.remoteAssignor } : {}) }
      : {
          'partition.assignment.strategy': options.assignor ?? 'range',
          'session.timeout.ms': options.sessionTimeoutMs ?? 6_000,
          'heartbeat.interval.ms': options.heartbeatIntervalMs ?? 250,
        };
  return {
    'bootstrap.servers': options.bootstrap,
    'client.id': options.name,
    'group.id': options.group,
    ...(options.instanceId ? { 'group.instance.id': options.instanceId } : {}),
    ...membership,
    'enable.auto.commit': false,
    'rebalance_cb': true,
    'offset_commit_cb': true,
    'fetch.wait.max.ms': 100,
    'reconnect.backoff.ms': 50,
    'reconnect.backoff.max.ms': 500,
    ...(options.debug ? { 'debug': options.debug } : {}),
    'log_level': options.debug ? 7 : 3,
  };
}

export class GroupMember implements MemberView {
  readonly records: MemberRecord[] = [];
  readonly events: RebalanceEvent[] = [];
  readonly assigned = new Set<number>();
  readonly committed = new Map<number, number>();
  readonly errors: string[] = [];
  /** Records librdkafka delivered for partitions not assigned to this member (dropped, not in `records`). */
  strays = 0;
  /** Called after each batch of records is kept (the child process reports them). */
  onRecords: (batch: MemberRecord[]) => void = () => {};
  onRebalance: (event: RebalanceEvent) => void = () => {};
  onCommitted: (offsets: [number, number][]) => void = () => {};
  /** librdkafka's log lines when `debug` is set. */
  onLog: (line: string) => void = () => {};
  private running = true;
  /** 'ordered' commits: one outstanding, and the positions read since, waiting for it. */
  private commitOutstanding = false;
  private readonly commitWaiting = new Map<number, number>();
  private loop: Promise<void> = Promise.resolve();

  private constructor(
    readonly options: MemberOptions,
    private readonly consumer: KafkaConsumerType,
  ) {}

  get name(): string {
    return this.options.name;
  }

  /** Connects, subscribes and starts consuming; resolves once connected (not yet assigned). */
  static async start(options: MemberOptions): Promise<GroupMember> {
    const consumer = new KafkaConsumer(consumerConfig(options) as never, { 'auto.offset.reset': 'earliest' });
    const member = new GroupMember(options, consumer);
    consumer.on('rebalance', (err: LibrdKafkaError, partitions: TopicPartition[]) => member.rebalanced(err, partitions));
    consumer.on('offset.commit', (err: LibrdKafkaError, offsets: { partition: number; offset: number; error?: LibrdKafkaError }[]) => {
      if (options.commit === 'ordered') setImmediate(() => member.commitAnswered());
      if (err) {
        member.errors.push(`commit: ${err.message} (code ${err.code})`);
        return;
      }
      const acknowledged: [number, number][] = [];
      for (const o of offsets ?? []) {
        // OffsetCommit answers per partition: one partition can be refused while the call succeeds.
        if (o.error) {
          member.errors.push(`commit p${o.partition} at ${o.offset}: ${o.error.message} (code ${o.error.code})`);
          continue;
        }
        if (o.offset < 0) continue;
        member.committed.set(o.partition, o.offset);
        acknowledged.push([o.partition, o.offset]);
      }
      if (acknowledged.length > 0) member.onCommitted(acknowledged);
    });
    consumer.on('event.error', (err: LibrdKafkaError) => member.errors.push(`${err.message} (code ${err.code})`));
    if (options.debug) consumer.on('event.log', (line: { message: string }) => member.onLog(line.message));
    await new Promise<void>((resolve, reject) => {
      consumer.connect({ timeout: 20_000 }, (err) =>
        err ? reject(new Error(`member ${options.name} could not connect to ${options.bootstrap}: ${err.message}`)) : resolve(),
      );
    });
    consumer.setDefaultConsumeTimeout(100);
    consumer.subscribe([options.topic]);
    member.loop = member.consumeLoop();
    return member;
  }

  private rebalanced(err: LibrdKafkaError, partitions: TopicPartition[]): void {
    const numbers = partitions.map((p) => p.partition).sort((a, b) => a - b);
    // The binding has rebalanceProtocol() at run time; its types lack it.
    const cooperative = (this.consumer as unknown as { rebalanceProtocol(): string }).rebalanceProtocol() === 'COOPERATIVE';
    let event: RebalanceEvent;
    if (err.code === CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
      if (!cooperative) this.assigned.clear();
      for (const p of numbers) this.assigned.add(p);
      event = { kind: 'assigned', partitions: numbers, at: Date.now() };
    } else {
      if (cooperative) for (const p of numbers) this.assigned.delete(p);
      else this.assigned.clear();
      event = { kind: 'revoked', partitions: numbers, at: Date.now() };
    }
    this.events.push(event);
    this.onRebalance(event);
  }

  private async consumeLoop(): Promise<void> {
    while (this.running) {
      const batch = await new Promise<Message[]>((resolve) => {
        this.consumer.consume(200, (err, messages) => {
          if (err && err.code !== CODES.ERRORS.ERR__TIMED_OUT && err.code !== CODES.ERRORS.ERR__PARTITION_EOF) {
            this.errors.push(`consume: ${err.message} (code ${err.code})`);
          }
          resolve(messages ?? []);
        });
      });
      if (batch.length === 0) {
        await sleep(5);
        continue;
      }
      // librdkafka can hand over records of a partition it gave up a moment ago: a fetch begun
      // before a quick revoke during group formation (seen when the revoke follows the assign
      // by ~100 ms). They are the client's, not the group's; count them apart.
      const owned = batch.filter((m) => this.assigned.has(m.partition));
      this.strays += batch.length - owned.length;
      const kept = owned.map((m) => ({ partition: m.partition, offset: m.offset, value: m.value === null ? '' : m.value.toString() }));
      if (kept.length === 0) continue;
      this.records.push(...kept);
      this.onRecords(kept);
      this.commitBatch(batch);
    }
  }

  private commitBatch(batch: Message[]): void {
    const mode = this.options.commit ?? 'async';
    if (mode === 'none') return;
    const next = new Map<number, number>();
    for (const m of batch) if (this.assigned.has(m.partition)) next.set(m.partition, Math.max(next.get(m.partition) ?? 0, m.offset + 1));
    // Only partitions still owned: a revoked partition's commit would be fenced anyway.
    if (mode === 'ordered') {
      for (const [p, offset] of next) this.commitWaiting.set(p, offset);
      if (!this.commitOutstanding) this.commitWaitingNow();
      return;
    }
    const offsets = [...next].filter(([p]) => this.assigned.has(p)).map(([partition, offset]) => ({ topic: this.options.topic, partition, offset }));
    if (offsets.length === 0) return;
    try {
      if (mode === 'sync') {
        this.consumer.commitSync(offsets);
        // A synchronous commit has no callback of its own; it returned, so the broker took it.
        for (const o of offsets) this.committed.set(o.partition, o.offset);
        this.onCommitted(offsets.map((o) => [o.partition, o.offset]));
      } else {
        this.consumer.commit(offsets);
      }
    } catch (e) {
      this.errors.push(`commit (${mode}): ${(e as Error).message}`);
    }
  }

  /** 'ordered': the outstanding commit was answered; the positions read meanwhile go now. */
  private commitAnswered(): void {
    this.commitOutstanding = false;
    if (this.running) this.commitWaitingNow();
  }

  private commitWaitingNow(): void {
    const offsets = [...this.commitWaiting].filter(([p]) => this.assigned.has(p)).map(([partition, offset]) => ({ topic: this.options.topic, partition, offset }));
    this.commitWaiting.clear();
    if (offsets.length === 0) return;
    try {
      this.consumer.commit(offsets);
      this.commitOutstanding = true;
    } catch (e) {
      this.errors.push(`commit (ordered): ${(e as Error).message}`);
    }
  }

  /** Stops consuming and closes the consumer: it leaves the group (a static member does not). */
  async close(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.loop;
    await disconnect(this.consumer);
  }
}

export function startMember(options: MemberOptions): Promise<GroupMember> {
  return GroupMember.start(options);
}

// ─── Members in a process of their own ───────────────────────────────────────

const MEMBER_SCRIPT = fileURLToPath(new URL('./groups-member-process.ts', import.meta.url));

/** One line the child prints on stdout, about the member named `member`. */
export type MemberReport = { member: string } & (
  | { type: 'ready' }
  | { type: 'rebalance'; event: RebalanceEvent; assigned: number[] }
  | { type: 'records'; records: MemberRecord[] }
  | { type: 'committed'; offsets: [number, number][] }
  | { type: 'error'; message: string }
);

export interface MemberProcess {
  /** One view per member, in the order of the options given. */
  readonly members: MemberView[];
  readonly pid: number | undefined;
  /** SIGKILL: no LeaveGroup, no last commit. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Asks the child to close its consumers (leaving the group) and exit. */
  close(): Promise<void>;
  /** The child's stderr so far, for failure messages. */
  readonly stderr: string;
}

interface ReportedView extends MemberView {
  records: MemberRecord[];
  events: RebalanceEvent[];
  assigned: Set<number>;
  committed: Map<number, number>;
  errors: string[];
  ready: boolean;
}

/**
 * Runs the members in one child process (one tsx start for all of them, which
 * is what costs time) and mirrors what each reports.
 */
export async function spawnMembers(options: MemberOptions[]): Promise<MemberProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', MEMBER_SCRIPT, JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'test' },
  });
  const views = new Map<string, ReportedView>(
    options.map((o) => [o.name, { name: o.name, records: [], events: [], assigned: new Set(), committed: new Map(), errors: [], ready: false }]),
  );
  let stderr = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        const report = JSON.parse(line) as MemberReport;
        const view = views.get(report.member);
        if (view) applyReport(view, report);
      } catch {
        stderr += `${line}\n`;
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      resolve();
    }),
  );
  const names = options.map((o) => o.name).join(', ');
  await waitFor(() => gone || [...views.values()].every((v) => v.ready), {
    what: `the member process (${names}) to connect`,
    timeoutMs: 30_000,
    describe: () => `stderr: ${stderr.slice(-1500)}`,
  });
  if (gone) throw new Error(`the member process (${names}) exited with ${child.exitCode} before connecting: ${stderr.slice(-1500)}`);
  return {
    members: [...views.values()],
    get stderr() {
      return stderr;
    },
    get pid() {
      return child.pid;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async close() {
      if (gone) return;
      child.stdin!.write('close\n');
      const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(forced);
    },
  };
}

function applyReport(view: ReportedView, report: MemberReport): void {
  switch (report.type) {
    case 'ready':
      view.ready = true;
      break;
    case 'rebalance':
      view.events.push(report.event);
      // The child knows whether its protocol is cooperative; it reports the set after the change.
      view.assigned.clear();
      for (const p of report.assigned) view.assigned.add(p);
      break;
    case 'records':
      view.records.push(...report.records);
      break;
    case 'committed':
      for (const [p, o] of report.offsets) view.committed.set(p, o);
      break;
    case 'error':
      view.errors.push(report.message);
      break;
  }
}

// ─── Records, and accounting for them ────────────────────────────────────────

/**
 * Produces `count` records numbered from `from`, record `seq` to partition
 * `seq % partitions` with value `label:seq`, and waits for every delivery.
 */
export async function produceSequenced(bootstrap: string, topic: string, label: string, from: number, count: number, partitions: number): Promise<SentRecord[]> {
  const records: SentRecord[] = Array.from({ length: count }, (_, i) => ({
    partition: (from + i) % partitions,
    key: null,
    value: sequencedValue(label, from + i),
    headers: [],
    timestamp: Date.now(),
  }));
  const producer = await connectProducer(bootstrap, { 'linger.ms': 2 } as ProducerConfig);
  try {
    expectDelivered(await produceAll(producer, topic, records));
  } finally {
    await disconnect(producer);
  }
  return records;
}

/** Every record the members read between them. */
export function allRecords(members: readonly MemberView[]): MemberRecord[] {
  return members.flatMap((m) => m.records);
}

/** "a: p0,p1 | b: p2" for failure messages. */
export function describeAssignments(members: readonly MemberView[]): string {
  return members.map((m) => `${m.name}: ${[...m.assigned].sort((a, b) => a - b).join(',') || '-'}`).join(' | ');
}

/** Fails unless the members' current assignments are disjoint and cover 0..partitions-1. */
export function expectDisjointCompleteAssignment(members: readonly MemberView[], partitions: number): void {
  const owners = new Map<number, string[]>();
  for (const m of members) for (const p of m.assigned) owners.set(p, [...(owners.get(p) ?? []), m.name]);
  const problems: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const who = owners.get(p) ?? [];
    if (who.length === 0) problems.push(`partition ${p} is assigned to nobody`);
    if (who.length > 1) problems.push(`partition ${p} is assigned to ${who.join(' and ')}`);
  }
  for (const p of owners.keys()) if (p < 0 || p >= partitions) problems.push(`partition ${p} does not exist`);
  if (problems.length > 0) throw new Error(`the assignment is not disjoint and complete (${describeAssignments(members)}):\n  ${problems.join('\n  ')}`);
}

/** Whether the members' assignments are disjoint and complete right now. */
export function isDisjointComplete(members: readonly MemberView[], partitions: number): boolean {
  const seen = new Set<number>();
  for (const m of members) {
    for (const p of m.assigned) {
      if (seen.has(p)) return false;
      seen.add(p);
    }
  }
  return seen.size === partitions;
}

/** Waits until every member holds partitions and together they cover all of them, once each. */
export async function waitForCover(members: readonly MemberView[], partitions: number, what: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(() => isDisjointComplete(members, partitions) && members.every((m) => m.assigned.size > 0), {
    what: `${what}: a disjoint, complete assignment of ${partitions} partitions over ${members.map((m) => m.name).join(', ')}`,
    timeoutMs,
    describe: () => describeAssignments(members),
  });
}

/** Counts per sequence number of the label's records. */
export function sequenceCounts(label: string, records: readonly MemberRecord[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of records) {
    if (!r.value.startsWith(`${label}:`)) continue;
    const seq = Number(r.value.slice(label.length + 1));
    counts.set(seq, (counts.get(seq) ?? 0) + 1);
  }
  return counts;
}

/** Waits until every sequence number 0..total-1 of `label` has been read by some member. */
export async function waitForAllRecords(label: string, total: number, members: readonly MemberView[], timeoutMs = 30_000): Promise<void> {
  await waitFor(() => sequenceCounts(label, allRecords(members)).size >= total, {
    what: `all ${total} records of ${label} to be read by the group`,
    timeoutMs,
    describe: () => {
      const counts = sequenceCounts(label, allRecords(members));
      const perMember = members.map((m) => `${m.name} read ${m.records.length}`).join(', ');
      const errors = members.flatMap((m) => m.errors.map((e) => `${m.name}: ${e}`)).slice(0, 5);
      return `${counts.size} distinct read (${perMember}); assignment ${describeAssignments(members)}${errors.length ? `; errors: ${errors.join(' | ')}` : ''}`;
    },
  });
}

