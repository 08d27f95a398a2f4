/**
 * `npm run campaign -- --records N --minutes M [--seed S] [--store ha]`: the
 * fault campaign (./campaign.ts) against PostgreSQL in a schema of its own.
 * The store is DATABASE_URL, or the local test server `npm test` sets up, or
 * a throwaway cluster; with `--store ha` it is the replicated store instead
 * (test/support/pg-ha.ts: pg_auto_failover's monitor and three nodes, one
 * synchronous standby), started here and removed at the end, and the
 * scheduler also kills its primary, a standby and the failover manager
 * (./store-faults.ts). Prints the faults as they happen, progress every
 * 15 s, the checker's details, and as its last line
 *
 *   campaign: N records, F faults (P of the PostgreSQL primary), 0 lost, 0 duplicated, 0 out of order, 0 read_committed anomalies
 *
 * Exits 0 when the checker found no anomaly of any kind, 1 otherwise.
 *
 * With `--target kafka` the same campaign runs against three Apache Kafka
 * nodes instead (./kafka-target.ts: replication factor 3, Kafka's faults).
 *
 * The npm script sets UV_THREADPOOL_SIZE=64: a librdkafka call that never
 * returns (sendOffsetsToTransaction, docs/fault-campaign.md) holds one of
 * libuv's threads, and with the default four held no client connects.
 */
import { pgHaMissing, startPgHa, type PgHaCluster } from '../support/pg-ha.js';
import { findTestDatabase } from '../support/postgres.js';
import { runCampaign } from './campaign.js';
import { runKafkaCampaign } from './kafka-target.js';
import { storeFaults } from './store-faults.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`campaign: --${name} takes a positive number, not ${JSON.stringify(process.argv[at + 1])}`);
    process.exit(2);
  }
  return value;
}

const records = Math.floor(flag('records', 10_000));
const minutes = flag('minutes', 3);
const seed = Math.floor(flag('seed', Date.now() % 1_000_000));
const storeAt = process.argv.indexOf('--store');
const store = storeAt < 0 ? 'single' : process.argv[storeAt + 1];
if (store !== 'single' && store !== 'ha') {
  console.error(`campaign: --store takes single or ha, not ${JSON.stringify(store)}`);
  process.exit(2);
}
const targetAt = process.argv.indexOf('--target');
const target = targetAt < 0 ? 'gateway' : process.argv[targetAt + 1];
if ((target !== 'gateway' && target !== 'kafka') || (target === 'kafka' && store === 'ha')) {
  console.error(`campaign: --target takes gateway or kafka (kafka without --store ha), not ${JSON.stringify(target)}`);
  process.exit(2);
}
const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
let code = 1;
let ha: PgHaCluster | null = null;
let release: () => Promise<void> = async () => {};
try {
  if (target === 'kafka') {
    say(`campaign: ${records} records, at most ${minutes} minutes, seed ${seed}, target Apache Kafka`);
    const result = await runKafkaCampaign({ records, minutes, seed, say });
    console.log(result.line);
    process.exit(result.clean ? 0 : 1);
  }
  let database: { url: string; schema: string };
  if (store === 'ha') {
    const missing = pgHaMissing();
    if (missing) throw new Error(`--store ha: ${missing}`);
    say('starting the replicated store (pg_auto_failover: a monitor, three nodes)');
    ha = await startPgHa();
    database = { url: ha.url, schema: 'queen_campaign' };
  } else {
    const found = await findTestDatabase();
    if (!found.database) {
      console.error(`campaign: ${found.skipReason}`);
      process.exit(2);
    }
    release = () => found.database!.release();
    database = { url: found.database.url, schema: found.database.freshSchema('queen_campaign') };
  }
  say(`campaign: ${records} records, at most ${minutes} minutes, seed ${seed}, store ${ha ? `replicated (${ha.dir})` : 'one PostgreSQL'}`);
  const result = await runCampaign({ records, minutes, seed, database, say, ...(ha ? { storeFaults: storeFaults(ha) } : {}) });
  code = result.clean ? 0 : 1;
  console.log(result.line);
} catch (e) {
  console.error(`campaign failed: ${(e as Error).stack}`);
} finally {
  await release().catch(() => {});
  await ha?.stop().catch(() => {});
}
process.exit(code);
