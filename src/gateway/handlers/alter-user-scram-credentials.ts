// AlterUserScramCredentials: creates, replaces and deletes users' SCRAM
// credentials. The client sends the salt and SaltedPassword (the password
// itself never travels); the core keeps only StoredKey and ServerKey derived
// from it (../sasl/scram.ts), so what is stored cannot be replayed as a
// password. A user made here can log in with SCRAM, and with PLAIN (which
// checks the same store).
//
// As Kafka: one result per user. An empty name or an iteration count outside
// 4096-16384 answers UNACCEPTABLE_CREDENTIAL, an unknown mechanism
// UNSUPPORTED_SASL_MECHANISM, the same user and mechanism twice in one
// request DUPLICATE_RESOURCE, deleting a credential that does not exist
// RESOURCE_NOT_FOUND. A user's good alterations apply even when another
// user's are refused. ACLs: ALTER on the cluster, else every user's result
// is CLUSTER_AUTHORIZATION_FAILED and nothing changes.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { AlterUserScramCredentials } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { MAX_SCRAM_ITERATIONS, MIN_SCRAM_ITERATIONS, SCRAM_KEY_BYTES, type ScramCredential, type ScramCredentialRef, type ScramMechanism } from '../../core/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { scramKeysFromSaltedPassword } from '../sasl/scram.js';
import { scramMechanismOf } from '../sasl/scram-mechanisms.js';

type Deletion = RequestOf<typeof AlterUserScramCredentials>['deletions'][number];

type Upsertion = RequestOf<typeof AlterUserScramCredentials>['upsertions'][number];

type Refusal = { errorCode: number; errorMessage: string };

function problemOf(change: Deletion | Upsertion, mechanism: ScramMechanism | null): Refusal | null {
  if (change.name === '') return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' };
  if (mechanism === null) return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' };
  if (!('iterations' in change)) return null;
  if (change.iterations < MIN_SCRAM_ITERATIONS) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: `Too few iterations: at least ${MIN_SCRAM_ITERATIONS}` };
  if (change.iterations > MAX_SCRAM_ITERATIONS) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: `Too many iterations: at most ${MAX_SCRAM_ITERATIONS}` };
  if (change.salt.length === 0) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'The salt must not be empty' };
  if (change.saltedPassword.length !== SCRAM_KEY_BYTES[mechanism]) {
    return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: `The salted password must be ${SCRAM_KEY_BYTES[mechanism]} bytes for ${mechanism}` };
  }
  return null;
}

export const alterUserScramCredentials: ApiHandler<typeof AlterUserScramCredentials> = {
  api: AlterUserScramCredentials,
  versions: '0',
  async handle(request, ctx) {
    const deletions = request.deletions;
    const upsertions = request.upsertions;
    const users: string[] = [];
    const refusals = new Map<string, Refusal>();
    const refuse = (user: string, refusal: Refusal) => {
      if (!refusals.has(user)) refusals.set(user, refusal);
    };
    const mayAlter = ctx.access.allows('ALTER', 'CLUSTER', CLUSTER_NAME);
    const seen = new Set<string>();
    for (const change of [...deletions, ...upsertions]) {
      if (!users.includes(change.name)) users.push(change.name);
      if (!mayAlter) refuse(change.name, { errorCode: DENIED_CODE.CLUSTER, errorMessage: 'Not authorized to alter SCRAM credentials: it needs ALTER on the cluster.' });
      const key = `${change.mechanism}\0${change.name}`;
      if (seen.has(key)) refuse(change.name, { errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' });
      seen.add(key);
      const problem = problemOf(change, scramMechanismOf(change.mechanism));
      if (problem) refuse(change.name, problem);
    }
    const accepted = (change: Deletion) => !refusals.has(change.name);
    const toDelete: ScramCredentialRef[] = deletions.filter(accepted).map((d) => ({ user: d.name, mechanism: scramMechanismOf(d.mechanism)! }));
    const toUpsert: ScramCredential[] = upsertions.filter(accepted).map((u) => {
      const mechanism = scramMechanismOf(u.mechanism)!;
      return { user: u.name, mechanism, iterations: u.iterations, salt: Buffer.from(u.salt), ...scramKeysFromSaltedPassword(mechanism, u.saltedPassword) };
    });
    if (toDelete.length > 0 || toUpsert.length > 0) {
      const { results } = await ctx.core.alterScramCredentials({ deletions: toDelete, upsertions: toUpsert });
      for (const r of results) {
        if (r.error === 'not_found') refuse(r.user, { errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' });
      }
    }
    return {
      throttleTimeMs: 0,
      results: users.map((user) => ({ user, errorCode: refusals.get(user)?.errorCode ?? NONE, errorMessage: refusals.get(user)?.errorMessage ?? null })),
    };
  },
};
