import { describe, expect, it } from 'vitest';
import { checkAlterScramCredentials, checkScramCredential, checkScramUsers, validateScramMechanism, validateScramUser } from '../../../src/core/rules/scram-credentials.js';

const credential = { user: 'alice', mechanism: 'SCRAM-SHA-256', iterations: 4096, salt: Buffer.alloc(16, 1), storedKey: Buffer.alloc(32, 2), serverKey: Buffer.alloc(32, 3) };

describe('SCRAM credentials', () => {
  it('takes a credential with Kafka\'s iteration bounds and keys the size of the mechanism\'s hash', () => {
    expect(checkScramCredential(credential)).toEqual(credential);
    expect(checkScramCredential({ ...credential, mechanism: 'SCRAM-SHA-512', iterations: 16384, storedKey: Buffer.alloc(64), serverKey: Buffer.alloc(64) }).iterations).toBe(16384);
    expect(() => checkScramCredential({ ...credential, iterations: 4095 })).toThrow(/iterations/);
    expect(() => checkScramCredential({ ...credential, iterations: 16385 })).toThrow(/iterations/);
    expect(() => checkScramCredential({ ...credential, mechanism: 'SCRAM-SHA-512' })).toThrow(/storedKey must be 64 bytes/);
    expect(() => checkScramCredential({ ...credential, serverKey: Buffer.alloc(31) })).toThrow(/serverKey must be 32 bytes/);
    expect(() => checkScramCredential({ ...credential, salt: Buffer.alloc(0) })).toThrow(/salt must be 1 to 1024 bytes/);
    expect(() => checkScramCredential({ ...credential, salt: 'salt' })).toThrow(/salt must be 1 to 1024 bytes/);
  });

  it('refuses an unknown mechanism and an empty or oversized user, saying which', () => {
    expect(validateScramMechanism('SCRAM-SHA-512')).toBe('SCRAM-SHA-512');
    expect(() => validateScramMechanism('PLAIN')).toThrow(/"PLAIN" is not one of SCRAM-SHA-256, SCRAM-SHA-512/);
    expect(() => validateScramUser('')).toThrow(/non-empty string/);
    expect(() => validateScramUser('é'.repeat(513))).toThrow(/at most 1024 bytes/);
    expect(validateScramUser('é'.repeat(512))).toHaveLength(512);
  });

  it('checks deletions and upsertions of one alteration, and the users a describe names (none: every user)', () => {
    const req = checkAlterScramCredentials({ deletions: [{ user: 'bob', mechanism: 'SCRAM-SHA-512' }], upsertions: [credential as never] });
    expect(req.deletions).toEqual([{ user: 'bob', mechanism: 'SCRAM-SHA-512' }]);
    expect(req.upsertions).toHaveLength(1);
    expect(() => checkAlterScramCredentials({ deletions: [{ user: 'bob', mechanism: 'MD5' } as never], upsertions: [] })).toThrow(/MD5/);
    expect(() => checkAlterScramCredentials({ deletions: [], upsertions: [{ ...credential, iterations: 1 } as never] })).toThrow(/iterations/);
    expect(checkScramUsers(null)).toBeNull();
    expect(checkScramUsers(undefined)).toBeNull();
    expect(checkScramUsers(['alice'])).toEqual(['alice']);
    expect(() => checkScramUsers([''])).toThrow(/non-empty/);
  });
});
