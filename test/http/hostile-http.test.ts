/**
 * Odd but possible HTTP bodies, over a real socket on each engine: numbers
 * sent as strings are refused rather than read ("0x10" is not 16), a payload
 * with a "__proto__" key is data and comes back as sent, and a KV counter
 * stays exact past 2^53 (answered as its exact digits).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`hostile HTTP bodies, ${engine.name} engine${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let broker: Broker;
    beforeAll(async () => {
      const choice = engine.fresh();
      broker = await startBroker({ ...(choice.engine === 'memory' ? { engine: 'memory' } : { engine: 'postgres', url: choice.url, schema: choice.schema }), http: { port: 0 } });
    });
    afterAll(() => broker?.stop());

    /** Sends `body` as the exact JSON text given; answers the status and the raw text. */
    async function send(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
      const response = await fetch(`${broker.httpUrl}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body }),
      });
      return { status: response.status, text: await response.text() };
    }

    it('"partitions": "0x10" (or "16") is refused as not a number, not read as 16', async () => {
      for (const partitions of ['"0x10"', '"16"']) {
        const answer = await send('POST', '/api/v1/configure', `{"queue":"hex-count","partitions":${partitions}}`);
        expect(answer.status, answer.text).toBe(400);
        expect(JSON.parse(answer.text)).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/body\.partitions must be integer/) });
      }
      expect((await send('GET', '/api/v1/queues/hex-count')).status, 'nothing was created').toBe(404);
      // Query strings are still read as numbers, strictly.
      expect((await send('GET', '/api/v1/kv/counters?limit=10')).status).toBe(200);
      const hex = await send('GET', '/api/v1/kv/counters?limit=0x10');
      expect(hex.status, hex.text).toBe(400);
      expect(JSON.parse(hex.text).message).toMatch(/querystring\.limit must be integer/);
    });

    it('a payload with "__proto__" and "constructor" keys is stored and served back as data', async () => {
      expect((await send('POST', '/api/v1/configure', '{"queue":"proto-keys"}')).status).toBe(201);
      const payload = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"n":1}';
      const pushed = await send('POST', '/api/v1/push', `{"items":[{"queue":"proto-keys","payload":${payload}}]}`);
      expect(pushed.status, pushed.text).toBe(201);
      const popped = await send('GET', '/api/v1/pop/queue/proto-keys?consumerGroup=readers');
      expect(popped.status, popped.text).toBe(200);
      // The raw answer carries the keys as sent; parsed, they are own properties, not a prototype.
      expect(popped.text).toContain('"__proto__":{"polluted":true}');
      const message = JSON.parse(popped.text).messages[0];
      expect(Object.keys(message.data)).toEqual(['__proto__', 'constructor', 'n']);
      expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    });

    it('KV incr stays exact past 2^53 and answers the exact digits', async () => {
      const max = '9007199254740991';
      expect((await send('POST', '/api/v1/kv/counters/big/incr', `{"by":${max}}`)).text).toContain(`"value":${max}`);
      for (let i = 0; i < 3; i++) await send('POST', '/api/v1/kv/counters/big/incr', '{"by":1}');
      const after = await send('POST', '/api/v1/kv/counters/big/incr', '{"by":3}');
      // 2^53 - 1 + 3 + 3 is odd: no double holds it (one would say ...996 or ...998).
      expect(after.text, after.text).toContain('"value":9007199254740997');
      expect((await send('GET', '/api/v1/kv/counters/big')).text).toContain('"value":9007199254740997');
      const down = await send('POST', '/api/v1/kv/counters/big/incr', `{"by":-${max}}`);
      expect(down.text).toContain('"value":6');
      const unsafe = await send('POST', '/api/v1/kv/counters/big/incr', '{"by":18014398509481984}');
      expect(unsafe.status, unsafe.text).toBe(400);
      expect(JSON.parse(unsafe.text).message).toMatch(/beyond 2\^53-1/);
    });
  });
}
