/**
 * How the PostgreSQL engine tells a fault episode (availability.ts): one line
 * when the database stops answering, one when it answers again, and a call
 * that was already in flight when it went away does not end the episode (a
 * server shutting down answers some statements before it closes their
 * connections; ending the episode on one logged a second "not answering" line
 * for the same stop).
 */
import pino from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Availability } from '../../src/core/engines/postgres/availability.js';

function capture(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)).msg);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const shutdown = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('PostgreSQL availability episodes', () => {
  it('logs one line down and one back however many calls fail, and leaves other errors alone', async () => {
    const { log, lines } = capture();
    const availability = new Availability(log);
    const syntax = Object.assign(new Error('syntax error'), { code: '42601' });
    expect(availability.translate(syntax)).toBe(syntax);
    for (let i = 0; i < 5; i++) expect(availability.translate(refused())).toMatchObject({ code: 'unavailable' });
    expect(availability.available).toBe(false);
    availability.succeeded(availability.begin());
    expect(availability.available).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((l) => l.startsWith('PostgreSQL is not answering'))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('PostgreSQL is answering again'))).toHaveLength(1);
  });

  it('is not ended by a call that began before the database went away, only by one begun since', async () => {
    const { log, lines } = capture();
    const availability = new Availability(log);
    const inFlight = availability.begin();
    availability.translate(refused());
    availability.succeeded(inFlight);
    availability.translate(shutdown());
    expect(availability.available).toBe(false);
    const during = availability.begin();
    availability.succeeded(during);
    expect(availability.available).toBe(true);
    // A call begun while the database answered, coming back during the next episode, is not the evidence either.
    const stale = availability.begin();
    availability.translate(refused());
    availability.translate(refused());
    availability.succeeded(stale);
    expect(availability.available).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((l) => l.startsWith('PostgreSQL is not answering'))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith('PostgreSQL is answering again'))).toHaveLength(1);
  });

  it('keeps one episode through a failover: reads that answer while writes are refused do not end it, a commit does', async () => {
    const { log, lines } = capture();
    const availability = new Availability(log);
    availability.translate(refused());
    const noSyncStandby = () => Object.assign(new Error('this PostgreSQL server does not wait for a synchronous standby at commit now'), { code: 'QS001' });
    for (let i = 0; i < 5; i++) {
      availability.translate(noSyncStandby());
      availability.succeeded(availability.begin());
    }
    expect(availability.available, 'a read answered, but writes are still refused').toBe(false);
    availability.succeeded(availability.begin(), true);
    expect(availability.available).toBe(true);
    // The next episode without refused writes ends on a read again.
    availability.translate(refused());
    availability.succeeded(availability.begin());
    expect(availability.available).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((l) => l.startsWith('PostgreSQL is not answering'))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith('PostgreSQL is answering again'))).toHaveLength(2);
  });
});
