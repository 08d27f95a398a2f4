/**
 * The core behaviour suite once more, through the RPC on loopback: the
 * fixture's core is an RPC client connected to a server in front of the
 * engine, so every rule must survive the encoding, the framing and the hop.
 * The clock and the reaper are driven on the engine itself, behind the server.
 * PostgreSQL runs too when the test-database harness finds a server.
 */
import { afterAll, describe, it } from 'vitest';
import { MemoryEngine } from '../../src/core/engines/memory/index.js';
import { openPostgresEngine, type PostgresEngine } from '../../src/core/engines/postgres/index.js';
import { CoreFront } from '../../src/core/front.js';
import type { Engine } from '../../src/core/engine.js';
import type { Core } from '../../src/core/core.js';
import { connectCore, RpcServer, type RpcAddress } from '../../src/rpc/index.js';
import { findTestDatabase } from '../support/postgres.js';
import { describeCoreBehaviour } from '../core/behaviour.js';

const SECRET = 'behaviour-suite-secret';

/** Serves `engine` behind a core front on a free loopback port and connects a client to it; stop() closes all three. */
async function served(engine: Engine): Promise<{ client: Core; stop(): Promise<void> }> {
  const front = new CoreFront(engine);
  const server = new RpcServer({ core: front, secret: SECRET });
  const address: RpcAddress = await server.listen({ host: '127.0.0.1', port: 0 });
  const client = await connectCore({ address, secret: SECRET });
  return {
    client,
    stop: async () => {
      await client.close();
      await server.close();
      await front.close();
    },
  };
}

describeCoreBehaviour('memory over RPC (loopback TCP)', async () => {
  let now = Date.now();
  const engine = new MemoryEngine({ clock: () => now, maintenanceIntervalMs: 0 });
  const { client, stop } = await served(engine);
  return {
    core: client,
    advanceClock: (ms: number) => {
      now += ms;
    },
    runMaintenance: () => engine.maintenance.runMaintenance(),
    dispose: async () => {
      await stop();
    },
  };
});

const found = await findTestDatabase();
if (found.database === null) {
  describe.skip(`Core behaviour: postgres over RPC (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());

  describeCoreBehaviour(`postgres over RPC (${database.source})`, async () => {
    let now = Date.now();
    const schema = database.freshSchema();
    const open = (): Promise<PostgresEngine> => openPostgresEngine({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
    let engine = await open();
    let hop = await served(engine);
    return {
      core: hop.client,
      reopen: async (): Promise<Core> => {
        await hop.stop();
        engine = await open();
        hop = await served(engine);
        return hop.client;
      },
      advanceClock: (ms: number) => {
        now += ms;
      },
      runMaintenance: () => engine.maintenance.runMaintenance(),
      dispose: async () => {
        await hop.stop();
      },
    };
  });
}
