/**
 * The core behaviour suite once more, through the RPC on loopback: the
 * fixture's core is an RPC client connected to a server in front of the
 * engine, so every rule must survive the encoding, the framing and the hop.
 * The clock and the reaper are driven on the engine itself, behind the server.
 * PostgreSQL runs too when the test-database harness finds a server.
 */
import { afterAll, describe, it } from 'vitest';
import { MemoryCore } from '../../src/core/engines/memory/index.js';
import { openPostgresCore, type PostgresCore } from '../../src/core/engines/postgres/index.js';
import { withGroupCoordinator } from '../../src/core/queen-core.js';
import type { Core } from '../../src/core/core.js';
import { connectCore, RpcServer, type RpcAddress } from '../../src/rpc/index.js';
import { findTestDatabase } from '../support/postgres.js';
import { describeCoreBehaviour } from '../core/behaviour.js';

const SECRET = 'behaviour-suite-secret';

/** Serves `engine` on a free loopback port and connects a client to it. */
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

describeCoreBehaviour('memory over RPC (loopback TCP)', async () => {
  let now = Date.now();
  const engine = new MemoryCore({ clock: () => now, maintenanceIntervalMs: 0 });
  const { client, stop } = await served(engine);
  return {
    core: client,
    advanceClock: (ms: number) => {
      now += ms;
    },
    runMaintenance: () => engine.runMaintenance(),
    dispose: async () => {
      await stop();
      await engine.close();
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
      advanceClock: (ms: number) => {
        now += ms;
      },
      runMaintenance: () => engine.runMaintenance(),
      dispose: async () => {
        await hop.stop();
        await engine.close();
      },
    };
  });
}
