/**
 * SCRAM credentials as the core keeps them (RFC 5802): per user and
 * mechanism the salt, the iteration count and the two keys derived from the
 * salted password, StoredKey = H(HMAC(SaltedPassword, "Client Key")) and
 * ServerKey = HMAC(SaltedPassword, "Server Key"). Neither the password nor
 * the salted password is stored: StoredKey verifies a client's proof without
 * being able to produce one.
 *
 * Both engines check requests with the same rules, here; the types are the
 * Core interface's (../core.ts).
 */
import { SCRAM_MECHANISMS, type AlterScramCredentialsRequest, type ScramCredential, type ScramCredentialRef, type ScramMechanism } from '../core.js';
import { CoreError } from '../errors.js';
import { requireArray, requireInteger } from './arguments.js';

/** Kafka's bounds on a credential's iteration count. */
export const MIN_SCRAM_ITERATIONS = 4096;
export const MAX_SCRAM_ITERATIONS = 16384;
/** Kafka's user names are free text; this only keeps a row sane. */
const MAX_USER_BYTES = 1024;

export const SCRAM_KEY_BYTES: Readonly<Record<ScramMechanism, number>> = { 'SCRAM-SHA-256': 32, 'SCRAM-SHA-512': 64 };

export function validateScramUser(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new CoreError('invalid_argument', 'A SCRAM user name must be a non-empty string.');
  if (Buffer.byteLength(value) > MAX_USER_BYTES) throw new CoreError('invalid_argument', `A SCRAM user name is at most ${MAX_USER_BYTES} bytes.`);
  return value;
}

export function validateScramMechanism(value: unknown): ScramMechanism {
  if (!(SCRAM_MECHANISMS as readonly unknown[]).includes(value)) {
    throw new CoreError('invalid_argument', `SCRAM mechanism ${JSON.stringify(value)} is not one of ${SCRAM_MECHANISMS.join(', ')}.`);
  }
  return value as ScramMechanism;
}

function requireKey(value: unknown, field: string, bytes: number): Buffer {
  if (!Buffer.isBuffer(value) || value.length !== bytes) throw new CoreError('invalid_argument', `${field} must be ${bytes} bytes.`);
  return value;
}

export function checkScramCredential(value: unknown): ScramCredential {
  const c = (value ?? {}) as Partial<ScramCredential>;
  const mechanism = validateScramMechanism(c.mechanism);
  const bytes = SCRAM_KEY_BYTES[mechanism];
  if (!Buffer.isBuffer(c.salt) || c.salt.length === 0 || c.salt.length > 1024) throw new CoreError('invalid_argument', 'A SCRAM salt must be 1 to 1024 bytes.');
  return {
    user: validateScramUser(c.user),
    mechanism,
    iterations: requireInteger(c.iterations, 'iterations', MIN_SCRAM_ITERATIONS, MAX_SCRAM_ITERATIONS),
    salt: c.salt,
    storedKey: requireKey(c.storedKey, 'storedKey', bytes),
    serverKey: requireKey(c.serverKey, 'serverKey', bytes),
  };
}

export function checkAlterScramCredentials(req: AlterScramCredentialsRequest): AlterScramCredentialsRequest {
  const deletions = requireArray<ScramCredentialRef>(req?.deletions, 'deletions').map((d) => ({
    user: validateScramUser(d?.user),
    mechanism: validateScramMechanism(d?.mechanism),
  }));
  const upsertions = requireArray<ScramCredential>(req.upsertions, 'upsertions').map(checkScramCredential);
  return { deletions, upsertions };
}

export function checkScramUsers(users: unknown): string[] | null {
  if (users === undefined || users === null) return null;
  return requireArray<string>(users, 'users').map(validateScramUser);
}
