/**
 * The fault campaign's small form, in the suite: the whole campaign of
 * ./campaign.ts (two cores, three gateways, Redis behind a link it can cut;
 * librdkafka and Java idempotent producers, transactions, HTTP pushes and
 * once markers, a classic and a KIP-848 group, the transform processor)
 * with 1,000 records for at most 45 s of faults, judged by the checker:
 * every count zero, group offsets and once markers included, faults
 * injected. `npm run campaign` is the long form, with the share group too:
 * its three JVMs took this test past its budget on a loaded machine (330 s),
 * so here it is off; test/campaign/checker.test.ts judges its histories.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { findTestDatabase } from '../support/postgres.js';
import { redisServerMissing } from '../support/redis.js';
import { runCampaign } from './campaign.js';

const found = await findTestDatabase();
const skipReason = found.skipReason ?? redisServerMissing();

describe.skipIf(skipReason !== null)(`the fault campaign, small form${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  afterAll(() => found.database?.release(), 60_000);

  it('loses, doubles and reorders nothing, and read_committed shows nothing aborted, through 45 s of random faults', async () => {
    const said: string[] = [];
    const result = await runCampaign({
      records: 1_000,
      minutes: 0.75,
      seed: 29,
      shareGroup: false,
      database: { url: found.database!.url, schema: found.database!.freshSchema('queen_campaign') },
      say: (line) => said.push(line),
    });
    console.log([...said, result.line].join('\n'));
    expect(result.faults.total, said.join('\n')).toBeGreaterThan(0);
    expect(result.line).toMatch(/^campaign: \d+ records, \d+ faults \(0 of the PostgreSQL primary\), 0 lost, 0 duplicated, 0 out of order, 0 read_committed anomalies$/);
    // The minute can run out before every writer has its share on a busy machine: what was written is judged.
    expect(result.verdict.records).toBeGreaterThan(0);
    const { lost, duplicated, outOfOrder, readCommitted, groupOffsets, transform, once, share } = result.verdict;
    expect({ lost, duplicated, outOfOrder, readCommitted, groupOffsets, transform, once, share }, said.join('\n')).toEqual({ lost: 0, duplicated: 0, outOfOrder: 0, readCommitted: 0, groupOffsets: 0, transform: 0, once: 0, share: 0 });
  }, 330_000);
});
