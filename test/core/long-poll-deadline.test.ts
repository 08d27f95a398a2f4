/**
 * A long-poll pop whose wait ends as a message arrives (issue 32: Queen's
 * streams suites on PostgreSQL): the message is either in the pop's answer or
 * still there for the next pop, never claimed under a lease nobody was told of.
 * On PostgreSQL the deadline's last look used to run beside the wake-up's
 * check; when the check claimed the message and the last look, finding the
 * partition locked, answered first, the claim was dropped and the partition
 * stayed leased until the lease ran out (a streams runner saw nothing for
 * half a minute). Pushes are timed around the deadline, many times over, on
 * both engines.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import { findTestDatabase } from '../support/postgres.js';

const found = await findTestDatabase();
afterAll(() => found.database?.release());

const WAIT_MS = 120;
const ROUNDS = 40;

const engines: { name: string; skipReason: string | null; open: () => Promise<Core> }[] = [
  { name: 'memory', skipReason: null, open: () => openCore({ engine: 'memory' }) },
  {
    name: 'postgres',
    skipReason: found.skipReason,
    open: () => openCore({ engine: 'postgres', url: found.database!.url, schema: found.database!.freshSchema('long_poll'), maintenanceIntervalMs: 0 }),
  },
];

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`a long-poll pop at its deadline (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    it(`loses no message pushed as the wait ends (${ROUNDS} rounds)`, async () => {
      const core = await engine.open();
      try {
        await core.createQueue({ name: 'deadline', partitions: 1, partitionNames: ['Default'] });
        const lost: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          // From a little before the deadline to just after it.
          const pushAt = WAIT_MS - 30 + (round % 10) * 4;
          const waiting = core.pop({ queue: 'deadline', consumerGroup: 'g', owner: `waiter-${round}`, batch: 10, waitMs: WAIT_MS });
          await new Promise((r) => setTimeout(r, pushAt));
          await core.push({ items: [{ queue: 'deadline', payload: { round } }] });
          const answered = await waiting;
          let got = answered.messages;
          let lease = answered.lease;
          if (got.length === 0) {
            const next = await core.pop({ queue: 'deadline', consumerGroup: 'g', owner: `next-${round}`, batch: 10, waitMs: 2_000 });
            got = next.messages;
            lease = next.lease;
          }
          if (!got.some((m) => (m.payload as { round: number }).round === round)) lost.push(round);
          for (const m of got) await core.ack({ queue: 'deadline', partition: m.partition, consumerGroup: 'g', offset: m.offset, status: 'completed', leaseId: lease!.id });
        }
        expect(lost, `rounds whose message neither the waiting pop nor the next one got: ${lost.join(', ')}`).toEqual([]);
      } finally {
        await core.close();
      }
    }, 120_000);
  });
}
