/**
 * Native partition names are free text, shown in logs, listings and Kafka's
 * view of the queue; on both engines a push naming a partition with a
 * bidirectional control (which makes one name display as another) or a lone
 * surrogate (which no UTF-8 store or client can hold) is refused with 400
 * invalid_name and a sentence saying what is wrong, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpEngines, type HttpRig } from './support.js';

for (const engine of await httpEngines()) {
  describe.skipIf(engine.skipReason !== null)(`partition names over HTTP, ${engine.name} engine${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    beforeAll(async () => {
      rig = await engine.open();
      expect((await rig.call('POST', '/api/v1/configure', { queue: 'names' })).status).toBe(201);
    });
    afterAll(() => rig?.close());

    it.each([
      ['a right-to-left override', 'invoice\u202Egpj.exe', /bidirectional text control \(U\+202E\)/],
      ['a first-strong isolate', 'a\u2068b', /bidirectional text control \(U\+2068\)/],
      ['a lone high surrogate', 'half\uD83D', /lone UTF-16 surrogate/],
    ])('refuses %s and writes nothing', async (_, partition, message) => {
      const pushed = await rig.call('POST', '/api/v1/push', { items: [{ queue: 'names', partition, payload: { n: 1 } }] });
      expect(pushed.status).toBe(400);
      expect(pushed.body).toMatchObject({ code: 'invalid_name', message: expect.stringMatching(message) });
      const queue = await rig.call('GET', '/api/v1/resources/queues/names');
      // A queue made by configure starts with Queen's one partition, "Default".
      expect(queue.body.partitions.map((p: { name: string }) => p.name)).toEqual(['Default']);
    });

    it('accepts printable Unicode names', async () => {
      const pushed = await rig.call('POST', '/api/v1/push', { items: [{ queue: 'names', partition: 'Kunde-äöü-客户-🚀', payload: { n: 2 } }] });
      expect(pushed.status).toBe(201);
      expect(pushed.body[0]).toMatchObject({ status: 'queued', partition: 'Kunde-äöü-客户-🚀' });
    });
  });
}
