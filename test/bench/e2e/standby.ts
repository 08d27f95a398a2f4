/**
 * The `standby` broker's store: the PostgreSQL engine on a primary whose
 * every commit waits for a synchronous standby (test/support/pg-ha.ts:
 * pg_auto_failover, three PostgreSQL 15 nodes, `ANY 1` synchronous
 * replication). One rig serves the whole run, started at the first
 * configuration that needs it (it takes tens of seconds), each gateway in a
 * schema of its own, and stopped when the run ends.
 */
import { startPgHa, type PgHaCluster } from '../../support/pg-ha.js';

let rig: Promise<PgHaCluster> | undefined;

export interface StandbyDatabase {
  /** The gateway's URL: every node, the writable one chosen at connect. */
  url: string;
  /** One node's URL, the primary's, for plain `pg` (which takes one host). */
  primaryUrl: string;
}

export async function standbyDatabase(): Promise<StandbyDatabase> {
  rig ??= startPgHa({ timeoutMs: 240_000 });
  const ha = await rig;
  return { url: ha.url, primaryUrl: ha.urlOf(await ha.primary()) };
}

export async function stopStandbyRig(): Promise<void> {
  if (!rig) return;
  const started = rig;
  rig = undefined;
  await (await started.catch(() => null))?.stop();
}
