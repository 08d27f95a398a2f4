/**
 * The core's behaviour suite on the replicated store: pg_auto_failover's
 * primary and two synchronous standbys (test/support/pg-ha.ts), reached
 * through a URL naming all three servers. So the primary routing, the commit
 * that checks for and waits on a standby, and the in-doubt handling change
 * no answer the core gives. Each test gets a schema of its own.
 *
 * Long (a rig to start, every commit waiting for a standby): outside
 * `npm test`, run by `npm run test:replicated` (which sets PG_HA_SUITE=1).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Core } from '../../src/core/core.js';
import { openPostgresEngine, type PostgresEngine } from '../../src/core/engines/postgres/index.js';
import { CoreFront } from '../../src/core/front.js';
import { pgHaMissing, startPgHa, type PgHaCluster } from '../support/pg-ha.js';
import { describeCoreBehaviour } from './behaviour.js';

const wanted = process.env['PG_HA_SUITE'] === '1';
const missing = pgHaMissing();

if (!wanted || missing !== null) {
  describe.skip(`Core behaviour: postgres, replicated (skipped: ${missing ?? 'run it with npm run test:replicated'})`, () => {
    it('needs pg_auto_failover and PG_HA_SUITE=1', () => {});
  });
} else {
  let ha: PgHaCluster;
  let schemas = 0;
  beforeAll(async () => {
    ha = await startPgHa();
  }, 240_000);
  afterAll(() => ha?.stop(), 60_000);

  describeCoreBehaviour('postgres (primary + synchronous standbys, multi-host URL)', async () => {
    let now = Date.now();
    const schema = `replicated_${process.pid}_${schemas++}`;
    const open = (): Promise<PostgresEngine> => openPostgresEngine({ url: ha.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
    let engine = await open();
    let core: Core = new CoreFront(engine);
    return {
      core,
      reopen: async (): Promise<Core> => {
        await core.close();
        engine = await open();
        core = new CoreFront(engine);
        return core;
      },
      advanceClock: (ms: number) => {
        now += ms;
      },
      runMaintenance: () => engine.maintenance.runMaintenance(),
    };
  });
}
