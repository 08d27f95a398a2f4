import { afterAll, describe, it } from 'vitest';
import type { Core } from '../../src/core/core.js';
import { openPostgresEngine, type PostgresEngine } from '../../src/core/engines/postgres/index.js';
import { CoreFront } from '../../src/core/front.js';
import { findTestDatabase } from '../support/postgres.js';
import { describeCoreBehaviour } from './behaviour.js';

// The behaviour suite against PostgreSQL: each test gets a schema of its own,
// and reopen() opens a second core on the same schema, as a restart would.
const found = await findTestDatabase();

if (found.database === null) {
  describe.skip(`Core behaviour: postgres (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());

  describeCoreBehaviour(`postgres (${database.source})`, async () => {
    let now = Date.now();
    const schema = database.freshSchema();
    const open = (): Promise<PostgresEngine> =>
      openPostgresEngine({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
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
