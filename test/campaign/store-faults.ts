/**
 * The replicated store's faults for the campaign's scheduler (./faults.ts),
 * on the pg_auto_failover rig of test/support/pg-ha.ts (a monitor and three
 * nodes, one synchronous standby required):
 *
 * - the primary SIGKILLed, its pg_autoctl with it, as a machine that dies:
 *   done when the monitor names another primary with a synchronous standby;
 *   the old node is started again and rejoins as a standby;
 * - the primary frozen with SIGSTOP (PostgreSQL and its keeper) until the
 *   monitor has promoted a standby, then SIGCONT: the old primary wakes up,
 *   finds itself demoted and follows the new one;
 * - a standby SIGKILLed, down 1-4 s, started again;
 * - the failover manager: the monitor SIGKILLed (its PostgreSQL too), down
 *   1-4 s, or a node's keeper (pg_autoctl alone, its PostgreSQL serving on)
 *   SIGKILLed and started again.
 *
 * Each fault leaves the rig whole before it returns: a primary and two
 * standbys (waited for, up to two minutes), so the next fault of the primary
 * always has a standby to fail over to.
 */
import { sleep } from '../support/eventually.js';
import type { PgHaCluster, PgHaNode } from '../support/pg-ha.js';
import { between, type Fault } from './faults.js';

const WHOLE_MS = 120_000;

/** Waits until the monitor reports a primary and both other nodes streaming as standbys. */
async function whole(ha: PgHaCluster): Promise<void> {
  const deadline = Date.now() + WHOLE_MS;
  for (;;) {
    const standbys = await ha.standbys().catch(() => []);
    if (standbys.length === ha.nodes.length - 1) return;
    if (Date.now() > deadline) throw new Error(`the store not whole again within ${WHOLE_MS} ms: standbys ${standbys.map((n) => n.name).join(', ') || 'none'}`);
    await sleep(500);
  }
}

const pickNode = (random: () => number, list: PgHaNode[]): PgHaNode => list[Math.floor(random() * list.length)]!;

export function storeFaults(ha: PgHaCluster): Fault[] {
  return [
    {
      kind: 'PostgreSQL primary SIGKILL',
      async run() {
        const old = await ha.primary();
        const started = Date.now();
        await ha.kill(old);
        const next = await ha.waitForPrimary({ not: old, timeoutMs: WHOLE_MS });
        const took = Date.now() - started;
        ha.restart(old);
        await whole(ha);
        return `${old.name} killed, ${next.name} primary after ${took} ms, ${old.name} a standby again`;
      },
    },
    {
      kind: 'PostgreSQL primary SIGSTOP',
      async run() {
        const old = await ha.primary();
        const started = Date.now();
        await ha.kill(old, 'SIGSTOP');
        let next: PgHaNode;
        try {
          next = await ha.waitForPrimary({ not: old, timeoutMs: WHOLE_MS });
        } finally {
          await ha.kill(old, 'SIGCONT');
        }
        const took = Date.now() - started;
        await whole(ha);
        return `${old.name} frozen, ${next.name} primary after ${took} ms, ${old.name} a standby again`;
      },
    },
    {
      kind: 'PostgreSQL standby SIGKILL',
      async run(random) {
        const victim = pickNode(random, await ha.standbys());
        const down = between(random, 1_000, 4_000);
        await ha.kill(victim);
        await sleep(down);
        ha.restart(victim);
        await whole(ha);
        return `${victim.name} down ${down} ms`;
      },
    },
    {
      kind: 'failover manager SIGKILL',
      async run(random) {
        const keeper = random() < 0.5;
        const victim = keeper ? pickNode(random, ha.nodes) : ha.monitor;
        const down = between(random, 1_000, 4_000);
        await ha.kill(victim, 'SIGKILL', { keeperOnly: keeper });
        await sleep(down);
        ha.restart(victim);
        await whole(ha);
        return `${keeper ? `${victim.name}'s keeper` : 'the monitor'} down ${down} ms`;
      },
    },
  ];
}
