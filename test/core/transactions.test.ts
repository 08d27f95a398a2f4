/**
 * The transaction coordinator's behaviour (./transactions-behaviour.ts) on the
 * memory engine, on PostgreSQL (reopen() opens a second core on the same
 * schema, as a restart would), and through the RPC in front of each.
 */
import { afterAll, describe, it } from 'vitest';
import { MemoryCore } from '../../src/core/engines/memory/index.js';
import { openPostgresCore, type PostgresCore } from '../../src/core/engines/postgres/index.js';
import { withGroupCoordinator } from '../../src/core/queen-core.js';
import type { Core } from '../../src/core/core.js';
import { connectCore, RpcServer, type RpcAddress } from '../../src/rpc/index.js';
import { findTestDatabase } from '../support/postgres.js';
import { describeTransactionBehaviour } from './transactions-behaviour.js';

const SECRET = 'transactions-suite-secret';

async function served(engine: Core): Promise<{ client: Core; stop(): Promise<void> }> {
  const server = new RpcServer({ core: withGroupCoordinator(engine), secret: SECRET });
  const address: RpcAddress = await server.listen({ host: '127.0.0.1', port: 0 });
  const client = await connectCore({ address, secret: SECRET });
  return {
    client,
    stop: async () => {
      await client.close();
      await server.close();
    },
  };
}

describeTransactionBehaviour('memory', async () => {
  let now = Date.now();
  const core = new MemoryCore({ clock: () => now, maintenanceIntervalMs: 0 });
  return { core, advanceClock: (ms) => void (now += ms), runMaintenance: () => core.runMaintenance() };
});

describeTransactionBehaviour('memory over RPC', async () => {
  let now = Date.now();
  const engine = new MemoryCore({ clock: () => now, maintenanceIntervalMs: 0 });
  const { client, stop } = await served(engine);
  return {
    core: client,
    advanceClock: (ms) => void (now += ms),
    runMaintenance: () => engine.runMaintenance(),
    dispose: async () => {
      await stop();
      await engine.close();
    },
  };
});

const found = await findTestDatabase();
if (found.database === null) {
  describe.skip(`Kafka transactions in the core: postgres (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());

  describeTransactionBehaviour(`postgres (${database.source})`, async () => {
    let now = Date.now();
    const schema = database.freshSchema();
    const open = (): Promise<PostgresCore> => openPostgresCore({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
    let core: PostgresCore = await open();
    return {
      core,
      reopen: async (): Promise<Core> => {
        await core.close();
        core = await open();
        return core;
      },
      advanceClock: (ms) => void (now += ms),
      runMaintenance: () => core.runMaintenance(),
    };
  });

  describeTransactionBehaviour(`postgres over RPC (${database.source})`, async () => {
    let now = Date.now();
    const schema = database.freshSchema();
    const open = (): Promise<PostgresCore> => openPostgresCore({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
    let engine = await open();
    let hop = await served(engine);
    return {
      core: hop.client,
      reopen: async (): Promise<Core> => {
        await hop.stop();
        await engine.close();
        engine = await open();
        hop = await served(engine);
        return hop.client;
      },
      advanceClock: (ms) => void (now += ms),
      runMaintenance: () => engine.runMaintenance(),
      dispose: async () => {
        await hop.stop();
        await engine.close();
      },
    };
  });
}
