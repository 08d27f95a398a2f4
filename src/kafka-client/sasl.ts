/**
 * The client's side of SASL (KIP-152: SaslHandshake, then SaslAuthenticate
 * rounds): PLAIN, SCRAM-SHA-256/512 (RFC 5802, RFC 7677; the password
 * prepared by SASLprep, the keys by node:crypto's PBKDF2 and HMAC, the
 * server's signature checked) and OAUTHBEARER (RFC 7628's client response
 * carrying the token).
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { saslprep } from '@mongodb-js/saslprep';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { KafkaAuthenticationError } from './errors.js';
import type { SaslSettings } from './settings.js';

const pbkdf2Async = promisify(pbkdf2);

/** Logs in over a connection that has negotiated its versions: `request` sends one request on it; `address` names it in errors. */
export async function authenticate(request: (apiKey: number, body: Message) => Promise<Message>, address: string, sasl: SaslSettings): Promise<void> {
  const shake = await request(ApiKey.SaslHandshake, { mechanism: sasl.mechanism });
  if (shake['errorCode'] !== 0) {
    throw new KafkaAuthenticationError(`SASL authentication error: ${address} does not take the mechanism ${sasl.mechanism} (it takes ${(shake['mechanisms'] as string[]).join(', ') || 'none'})`);
  }
  const step = async (bytes: Buffer): Promise<Buffer> => {
    const answer: Message = await request(ApiKey.SaslAuthenticate, { authBytes: bytes });
    if (answer['errorCode'] !== 0) {
      const said = answer['errorMessage'] ?? `error code ${answer['errorCode']}`;
      throw new KafkaAuthenticationError(`SASL authentication error: Authentication failed at ${address} due to invalid credentials with SASL mechanism ${sasl.mechanism} (the broker says: ${said})`);
    }
    return answer['authBytes'] as Buffer;
  };
  if (sasl.mechanism === 'PLAIN') {
    await step(Buffer.from(`\u0000${sasl.username}\u0000${sasl.password}`));
  } else if (sasl.mechanism === 'OAUTHBEARER') {
    await step(Buffer.from(`n,,\u0001auth=Bearer ${await sasl.token()}\u0001\u0001`));
  } else {
    await scram(sasl.mechanism, sasl.username, sasl.password, step, address);
  }
}

/** RFC 5802's saslname: ',' and '=' escaped. */
const saslName = (user: string) => user.replace(/=/g, '=3D').replace(/,/g, '=2C');

async function scram(mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', user: string, password: string, step: (bytes: Buffer) => Promise<Buffer>, address: string): Promise<void> {
  const hash = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
  const keyBytes = mechanism === 'SCRAM-SHA-256' ? 32 : 64;
  const nonce = randomBytes(24).toString('base64');
  const firstBare = `n=${saslName(user)},r=${nonce}`;
  const serverFirst = (await step(Buffer.from(`n,,${firstBare}`))).toString('utf8');
  const fields = Object.fromEntries(serverFirst.split(',').map((kv) => [kv.slice(0, 1), kv.slice(2)]));
  const serverNonce = fields['r'] ?? '';
  const iterations = Number(fields['i']);
  if (!serverNonce.startsWith(nonce) || !fields['s'] || !Number.isInteger(iterations) || iterations < 1) {
    throw new KafkaAuthenticationError(`SASL authentication error: ${address}'s SCRAM challenge is malformed`);
  }
  const salted = await pbkdf2Async(saslprep(password), Buffer.from(fields['s'], 'base64'), iterations, keyBytes, hash);
  const clientKey = createHmac(hash, salted).update('Client Key').digest();
  const storedKey = createHash(hash).update(clientKey).digest();
  const finalWithoutProof = `c=biws,r=${serverNonce}`;
  const authMessage = `${firstBare},${serverFirst},${finalWithoutProof}`;
  const signature = createHmac(hash, storedKey).update(authMessage).digest();
  const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
  const serverFinal = (await step(Buffer.from(`${finalWithoutProof},p=${proof.toString('base64')}`))).toString('utf8');
  const expected = createHmac(hash, createHmac(hash, salted).update('Server Key').digest()).update(authMessage).digest();
  const given = Buffer.from(serverFinal.startsWith('v=') ? serverFinal.slice(2) : '', 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new KafkaAuthenticationError(`SASL authentication error: ${address}'s SCRAM signature does not match (${serverFinal.startsWith('e=') ? serverFinal.slice(2) : 'not the server that holds the credential'})`);
  }
}
