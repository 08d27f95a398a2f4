/**
 * Queen's payload encryption at rest: a queue configured with
 * `encryptionEnabled` has each pushed payload sealed with AES-256-GCM under
 * the server's key (`--encryption-key`, or Queen's own variable
 * QUEEN_ENCRYPTION_KEY: 64 hex characters) before it is stored, and opened
 * when a pop, a dead-letter listing or a consumer of the HTTP API reads it.
 * The stored value is Queen's envelope, `{ encrypted, iv, authTag }` in
 * base64, so what the store and Kafka consumers of the topic see is
 * ciphertext. Node's crypto (OpenSSL) does the cipher; a fresh random
 * 96-bit IV per payload, as GCM asks.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;

export interface SealedPayload {
  encrypted: string;
  iv: string;
  authTag: string;
}

/** Why a key is not one, or null when it is; the sentence names what to fix. */
export function encryptionKeyProblem(hex: string): string | null {
  return /^[0-9a-fA-F]{64}$/.test(hex)
    ? null
    : `the encryption key must be 32 bytes written as 64 hex characters (got ${hex.length} characters${/^[0-9a-fA-F]*$/.test(hex) ? '' : ', not all hex'}); make one with: openssl rand -hex 32`;
}

export class PayloadCipher {
  private readonly key: Buffer;

  constructor(hexKey: string) {
    const problem = encryptionKeyProblem(hexKey);
    if (problem) throw new Error(`Cannot encrypt payloads: ${problem}.`);
    this.key = Buffer.from(hexKey, 'hex');
  }

  seal(payload: unknown): SealedPayload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    const encrypted = Buffer.concat([cipher.update(JSON.stringify(payload ?? null), 'utf8'), cipher.final()]);
    return { encrypted: encrypted.toString('base64'), iv: iv.toString('base64'), authTag: cipher.getAuthTag().toString('base64') };
  }

  /**
   * The payload a sealed value holds. Anything else (a queue's payloads from
   * before encryption was turned on, a value sealed under another key) is
   * answered as it is stored.
   */
  open(value: unknown): unknown {
    if (!isSealed(value)) return value;
    try {
      const decipher = createDecipheriv(ALGORITHM, this.key, Buffer.from(value.iv, 'base64'));
      decipher.setAuthTag(Buffer.from(value.authTag, 'base64'));
      const plain = Buffer.concat([decipher.update(Buffer.from(value.encrypted, 'base64')), decipher.final()]);
      return JSON.parse(plain.toString('utf8'));
    } catch {
      return value;
    }
  }
}

function isSealed(value: unknown): value is SealedPayload {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return Object.keys(v).length === 3 && typeof v.encrypted === 'string' && typeof v.iv === 'string' && typeof v.authTag === 'string';
}
