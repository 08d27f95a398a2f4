/**
 * Queen's payload encryption at rest over HTTP, on both engines: a queue
 * configured with encryptionEnabled stores AES-256-GCM envelopes (what the
 * core and Kafka consumers see) and the HTTP API answers the payloads as
 * pushed, through pop, transactions and the dead-letter listing; without the
 * key nothing is configured or pushed, and a bad key stops the start.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildHttpApi } from '../../src/http/index.js';
import { ConfigError, readConfig } from '../../src/cli/settings.js';
import { httpEngines, type HttpRig } from './support.js';

const KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const OTHER_KEY = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100';
const engines = await httpEngines();

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`payload encryption over HTTP: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open({ encryptionKey: KEY });
    });
    afterEach(() => rig.close());

    it('stores envelopes, not payloads, and answers pops, transactions and dead letters with the payloads as pushed', async () => {
      const configured = await rig.call('POST', '/api/v1/configure', { queue: 'secrets', options: { encryptionEnabled: true, maxSize: 1000 } });
      expect(configured).toMatchObject({ status: 201, body: { options: { encryptionEnabled: true, maxSize: 1000 } } });
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'secrets', payload: { card: '4111-1111' } }] });
      await rig.call('POST', '/api/v1/transaction', { operations: [{ type: 'push', items: [{ queue: 'secrets', payload: 'in a transaction' }] }] });

      // What is stored: Queen's envelope, with no trace of the payload.
      const stored = await rig.core.pop({ queue: 'secrets', consumerGroup: 'raw', owner: 'test', batch: 10, waitMs: 0 });
      expect(stored.messages).toHaveLength(2);
      for (const m of stored.messages) {
        expect(Object.keys(m.payload as object).sort()).toEqual(['authTag', 'encrypted', 'iv']);
        expect(JSON.stringify(m.payload)).not.toMatch(/4111|transaction/);
      }

      const popped = await rig.call('GET', '/api/v1/pop/queue/secrets?consumerGroup=readers&batch=10');
      expect(popped.body.messages.map((m: { data: unknown }) => m.data)).toEqual([{ card: '4111-1111' }, 'in a transaction']);
      const first = popped.body.messages[0];
      await rig.call('POST', '/api/v1/ack', { transactionId: first.transactionId, partitionId: first.partitionId, consumerGroup: 'readers', leaseId: first.leaseId, status: 'dlq' });
      const letters = await rig.call('GET', '/api/v1/dlq?queue=secrets');
      expect(letters.body.messages.map((m: { data: unknown }) => m.data)).toEqual([{ card: '4111-1111' }]);
    });

    it('a queue that does not encrypt keeps plain payloads beside one that does', async () => {
      await rig.call('POST', '/api/v1/configure', { queue: 'plain' });
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'plain', payload: { n: 1 } }] });
      const stored = await rig.core.pop({ queue: 'plain', consumerGroup: 'raw', owner: 'test', batch: 10, waitMs: 0 });
      expect(stored.messages[0]!.payload).toEqual({ n: 1 });
    });

    it('without the key: configure refuses, a push to an encrypting queue writes nothing; another key answers the envelope as stored', async () => {
      await rig.call('POST', '/api/v1/configure', { queue: 'secrets', options: { encryptionEnabled: true } });
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'secrets', payload: 'sealed' }] });
      const keyless = await buildHttpApi({ core: rig.core });
      const otherKey = await buildHttpApi({ core: rig.core, encryptionKey: OTHER_KEY });
      try {
        const refused = await keyless.inject({ method: 'POST', url: '/api/v1/configure', payload: { queue: 'more-secrets', options: { encryptionEnabled: true } } });
        expect(refused.statusCode).toBe(400);
        expect(refused.json().message).toMatch(/no encryption key.*--encryption-key/);
        expect(await rig.core.describeQueue({ name: 'more-secrets' })).toBeNull();

        const push = await keyless.inject({ method: 'POST', url: '/api/v1/push', payload: { items: [{ queue: 'secrets', payload: 'plain by mistake' }] } });
        expect(push.statusCode).toBe(503);
        expect(push.json().message).toMatch(/encrypts its payloads.*Nothing was pushed/);
        const [offsets] = (await rig.core.offsets({ partitions: [{ queue: 'secrets', partition: 0 }] })).partitions;
        expect(offsets!.highWatermark).toBe(1);

        const wrong = await otherKey.inject({ method: 'GET', url: '/api/v1/pop/queue/secrets?consumerGroup=g' });
        expect(Object.keys(wrong.json().messages[0].data).sort()).toEqual(['authTag', 'encrypted', 'iv']);
      } finally {
        await keyless.close();
        await otherKey.close();
      }
    });
  });
}

describe('payload encryption: the key setting', () => {
  it("refuses a key that is not 64 hex characters, with a sentence saying how to make one; reads Queen's own variable", () => {
    for (const bad of ['abc', 'z'.repeat(64)]) {
      let message = '';
      try {
        readConfig(['--encryption-key', bad], {}, 'serve');
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        message = (e as Error).message;
      }
      expect(message).toMatch(/^The flag --encryption-key \(or QUEEN_ENCRYPTION_KEY\) is wrong: the encryption key must be 32 bytes written as 64 hex characters .*openssl rand -hex 32\.$/);
    }
    expect(readConfig([], { QUEEN_ENCRYPTION_KEY: KEY }, 'serve').encryptionKey).toBe(KEY);
  });
});
