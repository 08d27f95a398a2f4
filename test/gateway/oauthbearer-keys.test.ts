/**
 * Which keys an OAUTHBEARER token is checked against (src/gateway/sasl/
 * oauthbearer.ts over jose): a PEM file of several keys with no kid, a JWKS
 * with kids, a token whose kid names no key; and the keys file reloaded when
 * it changes. The end-to-end tests with kafkajs, librdkafka and the Java
 * client are in test/e2e/security*.test.ts.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { checkToken, keySelector, OAuthBearerKeys, readVerificationKeys } from '../../src/gateway/sasl/oauthbearer.js';
import { waitFor } from '../support/eventually.js';
import { LogCapture } from '../support/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'queen-oauthbearer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rsaOne = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaTwo = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }) as string;

function jwt(key: KeyObject, header: Record<string, unknown>, claims: Record<string, unknown> = {}): string {
  const head = Buffer.from(JSON.stringify({ typ: 'JWT', ...header })).toString('base64url');
  const body = Buffer.from(JSON.stringify({ sub: 'svc', exp: Math.floor(Date.now() / 1000) + 60, ...claims })).toString('base64url');
  const signature = header.alg === 'ES256' ? sign('sha256', Buffer.from(`${head}.${body}`), { key, dsaEncoding: 'ieee-p1363' }) : sign('sha256', Buffer.from(`${head}.${body}`), key);
  return `${head}.${body}.${signature.toString('base64url')}`;
}

function keysFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('OAUTHBEARER keys', () => {
  it('takes a token signed by any of several kid-less PEM keys, of one type or another, and whatever kid it names', async () => {
    const keys = keySelector(readVerificationKeys(keysFile('several.pem', pem(rsaOne.publicKey) + pem(rsaTwo.publicKey) + pem(ec.publicKey))));
    const now = Date.now();
    for (const token of [
      jwt(rsaOne.privateKey, { alg: 'RS256' }),
      jwt(rsaTwo.privateKey, { alg: 'RS256' }),
      jwt(rsaTwo.privateKey, { alg: 'RS256', kid: 'rotated-2025' }),
      jwt(ec.privateKey, { alg: 'ES256' }),
    ]) {
      expect(await checkToken(token, keys, { keysFile: '' }, now)).toMatchObject({ sub: 'svc' });
    }
    expect(await checkToken(jwt(stranger.privateKey, { alg: 'RS256' }), keys, { keysFile: '' }, now)).toBe('the token signature does not verify against the configured keys');
  });

  it('picks a JWKS key by kid: the right kid verifies, a token signed by one key naming another is refused', async () => {
    const set = { keys: [{ ...rsaOne.publicKey.export({ format: 'jwk' }), kid: 'one' }, { ...rsaTwo.publicKey.export({ format: 'jwk' }), kid: 'two' }] };
    const keys = keySelector(readVerificationKeys(keysFile('jwks.json', JSON.stringify(set))));
    const now = Date.now();
    expect(await checkToken(jwt(rsaTwo.privateKey, { alg: 'RS256', kid: 'two' }), keys, { keysFile: '' }, now)).toMatchObject({ sub: 'svc' });
    expect(await checkToken(jwt(rsaTwo.privateKey, { alg: 'RS256', kid: 'one' }), keys, { keysFile: '' }, now)).toBe('the token signature does not verify against the configured keys');
    expect(await checkToken(jwt(rsaOne.privateKey, { alg: 'RS256', kid: 'three' }), keys, { keysFile: '' }, now)).toBe('the token signature does not verify against the configured keys');
  });

  it('refuses a keys file without usable keys with a sentence naming the file', () => {
    const file = keysFile('empty.json', '{"keys": []}');
    expect(() => readVerificationKeys(file)).toThrow(`The OAUTHBEARER keys file ${file} does not hold usable public keys: a JWKS document needs a non-empty "keys" list. Give PEM public keys or certificates, or a JWKS document.`);
  });

  it('uses a rewritten keys file once it changes, and keeps the old keys when the new file does not load', async () => {
    const file = keysFile('rotating.pem', pem(rsaOne.publicKey));
    const logs = new LogCapture();
    const log = pino(new Writable({ write: (chunk: Buffer, _e, done) => (logs.write(chunk.toString()), done()) }));
    const keys = new OAuthBearerKeys({ keysFile: file }, log);
    const stop = keys.watch();
    try {
      const byTwo = jwt(rsaTwo.privateKey, { alg: 'RS256' });
      expect(await checkToken(byTwo, keys.current, keys.options, Date.now())).toBe('the token signature does not verify against the configured keys');
      writeFileSync(file, pem(rsaTwo.publicKey));
      await waitFor(async () => typeof (await checkToken(byTwo, keys.current, keys.options, Date.now())) === 'object', { what: 'the rotated key in use', timeoutMs: 10_000 });
      writeFileSync(file, 'not a key');
      await waitFor(() => logs.matching('OAUTHBEARER keys file changed but does not load').length > 0, { what: 'the failed reload in the log', timeoutMs: 10_000 });
      expect(await checkToken(byTwo, keys.current, keys.options, Date.now())).toMatchObject({ sub: 'svc' });
    } finally {
      stop();
    }
  });
});
