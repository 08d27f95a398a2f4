/**
 * `npm run campaign -- --records N --minutes M [--seed S]`: the fault
 * campaign (./campaign.ts) against PostgreSQL (DATABASE_URL, or the local
 * test server `npm test` sets up, or a throwaway cluster) in a
 * schema of its own, dropped at the end. Prints the faults as they happen,
 * progress every 15 s, the checker's details, and as its last line
 *
 *   campaign: N records, F faults (P of the PostgreSQL primary), 0 lost, 0 duplicated, 0 out of order, 0 read_committed anomalies
 *
 * Exits 0 when the checker found no anomaly of any kind, 1 otherwise.
 */
import { findTestDatabase } from '../support/postgres.js';
import { runCampaign } from './campaign.js';

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
const found = await findTestDatabase();
if (!found.database) {
  console.error(`campaign: ${found.skipReason}`);
  process.exit(2);
}
const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
say(`campaign: ${records} records, at most ${minutes} minutes, seed ${seed}, PostgreSQL ${found.database.source}`);
let code = 1;
try {
  const result = await runCampaign({ records, minutes, seed, database: { url: found.database.url, schema: found.database.freshSchema('queen_campaign') }, say });
  code = result.clean ? 0 : 1;
  console.log(result.line);
} catch (e) {
  console.error(`campaign failed: ${(e as Error).stack}`);
} finally {
  await found.database.release();
}
process.exit(code);
