/**
 * The transaction coordinator's behaviour (./transactions-behaviour.ts) on the
 * memory engine, on PostgreSQL (reopen() opens a second core on the same
 * schema, as a restart would), and through the RPC in front of each.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { memoryFront, postgresFront } from '../support/fronts.js';
import type { CoreFront } from '../../src/core/front.js';
import type { PostgresEngine } from '../../src/core/engines/postgres/index.js';
import { buildBatch } from '../../protocol/records/record-batch.js';
import type { Core } from '../../src/core/core.js';
import { connectCore, RpcServer, type RpcAddress } from '../../src/rpc/index.js';
import { findTestDatabase } from '../support/postgres.js';
import { describeTransactionBehaviour } from './transactions-behaviour.js';
import { uniqueName } from './behaviour.js';

const SECRET = 'transactions-suite-secret';

async function served(engine: Core): Promise<{ client: Core; stop(): Promise<void> }> {
  const server = new RpcServer({ core: engine, secret: SECRET });
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
  const core = memoryFront({ clock: () => now, maintenanceIntervalMs: 0 });
  return { core, advanceClock: (ms) => void (now += ms), runMaintenance: () => core.engine.maintenance.runMaintenance() };
});

describeTransactionBehaviour('memory over RPC', async () => {
  let now = Date.now();
  const engine = memoryFront({ clock: () => now, maintenanceIntervalMs: 0 });
  const { client, stop } = await served(engine);
  return {
    core: client,
    advanceClock: (ms) => void (now += ms),
    runMaintenance: () => engine.engine.maintenance.runMaintenance(),
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
    const open = (): Promise<CoreFront<PostgresEngine>> => postgresFront({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
    let core: CoreFront<PostgresEngine> = await open();
    return {
      core,
      reopen: async (): Promise<Core> => {
        await core.close();
        core = await open();
        return core;
      },
      advanceClock: (ms) => void (now += ms),
      runMaintenance: () => core.engine.maintenance.runMaintenance(),
    };
  });

  describeTransactionBehaviour(`postgres over RPC (${database.source})`, async () => {
    let now = Date.now();
    const schema = database.freshSchema();
    const open = (): Promise<CoreFront<PostgresEngine>> => postgresFront({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
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
      runMaintenance: () => engine.engine.maintenance.runMaintenance(),
      dispose: async () => {
        await hop.stop();
        await engine.close();
      },
    };
  });

  describe(`Kafka transactions: several PostgreSQL cores on one database (${database.source})`, () => {
    it('sweep the same expired transaction at once and abort it exactly once', async () => {
      let now = Date.now();
      const schema = database.freshSchema();
      const open = (): Promise<CoreFront<PostgresEngine>> => postgresFront({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, poolSize: 4 });
      const cores = [await open(), await open(), await open()];
      try {
        const [first] = cores;
        const queue = uniqueName('swept');
        await first!.createQueue({ name: queue, partitions: 1, config: { dedupWindowSeconds: 0 } });
        const transactionalId = uniqueName('tid');
        const { producerId, producerEpoch } = await first!.initProducer({ transactionalId, transactionTimeoutMs: 1_000, producerId: -1, producerEpoch: -1 });
        await first!.addPartitionsToTxn({ transactionalId, producerId, producerEpoch, partitions: [{ queue, partition: 0 }] });
        const records = buildBatch({ records: [{ value: 'abandoned' }], producerId, producerEpoch, baseSequence: 0, isTransactional: true });
        expect((await first!.append({ partitions: [{ queue, partition: 0, records }] })).partitions[0]!.error).toBeNull();
        now += 5_000;
        await Promise.all(cores.map((c) => c.engine.maintenance.abortExpiredTransactions()));
        // One data batch and one abort marker: no core wrote a second marker.
        expect((await first!.offsets({ partitions: [{ queue, partition: 0 }] })).partitions[0]).toMatchObject({ highWatermark: 2, lastStableOffset: 2 });
        expect((await first!.describeTransactions({ transactionalIds: [transactionalId] })).transactions[0]).toMatchObject({ state: 'CompleteAbort', producerEpoch: producerEpoch + 1 });
      } finally {
        await Promise.all(cores.map((c) => c.close()));
      }
    });
  });
}
