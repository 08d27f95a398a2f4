/**
 * The fault campaign's scheduler: one fault at a time, picked at random
 * (seeded, so a run can be repeated) from what the rig can suffer without
 * losing every path to a record:
 *
 * - a gateway or a core SIGKILLed, down for 1-4 s, started again;
 * - a gateway, a core or Redis frozen with SIGSTOP for 1-5 s, then SIGCONT
 *   (a stalled process: its sockets stay open and say nothing);
 * - Redis SIGKILLed and started again empty;
 * - Redis's network link cut or throttled for 1-5 s (./network.ts), when
 *   the campaign runs Redis in a namespace;
 * - with the replicated store (test/support/pg-ha.ts), its faults
 *   (./store-faults.ts): the PostgreSQL primary SIGKILLed or frozen until a
 *   standby takes over, a standby SIGKILLed, the failover manager (the
 *   monitor, a node's keeper) SIGKILLed, each started again. Their kinds
 *   starting "PostgreSQL primary" are counted apart on the last line.
 *
 * Between faults the rig gets 1-4 s of quiet. Each fault restores what it
 * broke before the next starts; `stop()` waits for the one running.
 */
import { sleep } from '../support/eventually.js';
import type { ClusterRig, RigProcess } from '../support/cluster.js';
import type { RedisLink } from './network.js';

export interface FaultTargets {
  rig: ClusterRig;
  /** Redis's link, when Redis runs in a namespace. */
  link: RedisLink | null;
  /** The replicated store's faults (./store-faults.ts); none with a single PostgreSQL. */
  storeFaults: Fault[];
}

export interface FaultLog {
  /** Faults injected, by kind ("gateway SIGKILL": 4). */
  byKind: Map<string, number>;
  total: number;
  primary: number;
  /** Faults the scheduler picked but could not inject (counted apart, not in total, primary or byKind). */
  notInjected: number;
  /** One line per fault: when, what, how long. */
  lines: string[];
}

/** A small seeded generator (mulberry32): the same seed, the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Fault {
  /** Kinds starting "PostgreSQL primary" count as faults of the primary. */
  kind: string;
  run(random: () => number): Promise<string>;
}

export const between = (random: () => number, lowMs: number, highMs: number) => Math.round(lowMs + random() * (highMs - lowMs));
export const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

export function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid !== undefined) {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  }
}

/** Starts a process again; a start that fails (its port briefly held, a slow machine) is tried twice more. */
async function startAgain(victim: RigProcess): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await victim.start();
    } catch (e) {
      if (attempt === 3) throw e;
      await victim.kill();
      await sleep(1_000);
    }
  }
}

function killAndRestart(kind: string, list: () => RigProcess[]): Fault {
  return {
    kind,
    async run(random) {
      const victim = pick(random, list());
      const down = between(random, 1_000, 4_000);
      await victim.kill();
      await sleep(down);
      await startAgain(victim);
      return `${victim.name} down ${down} ms`;
    },
  };
}

function freeze(kind: string, list: () => { name: string; pid: number | undefined }[]): Fault {
  return {
    kind,
    async run(random) {
      const victim = pick(random, list());
      const frozen = between(random, 1_000, 5_000);
      signal(victim.pid, 'SIGSTOP');
      try {
        await sleep(frozen);
      } finally {
        signal(victim.pid, 'SIGCONT');
      }
      return `${victim.name} frozen ${frozen} ms`;
    },
  };
}

function faultsFor(targets: FaultTargets): Fault[] {
  const { rig, link } = targets;
  const redis = () => [{ name: 'redis', pid: rig.redis.pid }];
  const faults: Fault[] = [
    killAndRestart('gateway SIGKILL', () => rig.gateways),
    freeze('gateway SIGSTOP', () => rig.gateways),
    killAndRestart('core SIGKILL', () => rig.cores),
    freeze('core SIGSTOP', () => rig.cores),
    {
      kind: 'Redis SIGKILL',
      async run(random) {
        const down = between(random, 1_000, 4_000);
        await rig.redis.stop();
        await sleep(down);
        await rig.redis.start();
        return `redis down ${down} ms`;
      },
    },
    freeze('Redis SIGSTOP', redis),
  ];
  if (link) {
    for (const [kind, act] of [['Redis link cut', () => link.cut()], ['Redis link throttled', () => link.slow()]] as const) {
      faults.push({
        kind,
        async run(random) {
          const lasting = between(random, 1_000, 5_000);
          act();
          try {
            await sleep(lasting);
          } finally {
            link.heal();
          }
          return `for ${lasting} ms`;
        },
      });
    }
  }
  return [...faults, ...targets.storeFaults];
}

export interface FaultScheduler {
  readonly log: FaultLog;
  /** Lets the fault running finish, injects no more, and resolves when the rig is whole again. */
  stop(): Promise<void>;
}

export function startFaults(targets: FaultTargets, seed: number, onLine: (line: string) => void = () => {}): FaultScheduler {
  return scheduleFaults(faultsFor(targets), seed, onLine);
}

/** The scheduler over any list of faults (Apache Kafka's own run uses ./kafka-faults.ts's). */
export function scheduleFaults(faults: readonly Fault[], seed: number, onLine: (line: string) => void = () => {}): FaultScheduler {
  const random = seededRandom(seed);
  const log: FaultLog = { byKind: new Map(), total: 0, primary: 0, notInjected: 0, lines: [] };
  let picked = 0;
  const started = Date.now();
  let stopping = false;
  const loop = (async () => {
    await sleep(between(random, 1_000, 3_000));
    while (!stopping) {
      const fault = pick(random, faults);
      const at = ((Date.now() - started) / 1000).toFixed(1);
      let said: string;
      let injected = true;
      try {
        said = await fault.run(random);
      } catch (e) {
        injected = false;
        said = `failed to inject: ${(e as Error).message.split('\n')[0]}`;
      }
      picked += 1;
      if (injected) {
        log.total += 1;
        if (fault.kind.startsWith('PostgreSQL primary')) log.primary += 1;
        log.byKind.set(fault.kind, (log.byKind.get(fault.kind) ?? 0) + 1);
      } else log.notInjected += 1;
      const line = `fault ${picked} at ${at} s: ${fault.kind}, ${said}`;
      log.lines.push(line);
      onLine(line);
      const quiet = between(random, 1_000, 4_000);
      for (let waited = 0; waited < quiet && !stopping; waited += 250) await sleep(250);
    }
  })();
  return {
    log,
    async stop() {
      stopping = true;
      await loop;
    },
  };
}

export function describeFaults(log: FaultLog): string {
  const injected = [...log.byKind].sort((a, b) => b[1] - a[1]).map(([kind, n]) => `${n} ${kind}`).join(', ') || 'none';
  return log.notInjected === 0 ? injected : `${injected}; ${log.notInjected} picked but not injected (their lines say why)`;
}
