/**
 * The memory engine's SCRAM credentials: per user, per mechanism.
 * See ../../rules/scram-credentials.ts for what is kept and why.
 */
import {
  type AlterScramCredentialsRequest,
  type AlterScramCredentialsResult,
  type ScramCredential,
  type ScramCredentialRef,
  type ScramMechanism,
  type ScramUser,
} from '../../core.js';

export class MemoryScramCredentials {
  private readonly byUser = new Map<string, Map<ScramMechanism, ScramCredential>>();

  describe(req: { users?: string[] | null }): { users: ScramUser[] } {
    const users = req.users ?? [...this.byUser.keys()].sort();
    return {
      users: users.map((user) => ({
        user,
        credentials: [...(this.byUser.get(user)?.values() ?? [])].map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })),
      })),
    };
  }

  get(req: ScramCredentialRef): ScramCredential | null {
    return this.byUser.get(req.user)?.get(req.mechanism) ?? null;
  }

  alter(req: AlterScramCredentialsRequest): AlterScramCredentialsResult {
    const { deletions, upsertions } = req;
    const results: AlterScramCredentialsResult['results'] = [];
    for (const { user, mechanism } of deletions) {
      const mine = this.byUser.get(user);
      const deleted = mine?.delete(mechanism) ?? false;
      if (mine && mine.size === 0) this.byUser.delete(user);
      results.push({ user, mechanism, error: deleted ? null : 'not_found' });
    }
    for (const credential of upsertions) {
      const mine = this.byUser.get(credential.user) ?? new Map<ScramMechanism, ScramCredential>();
      mine.set(credential.mechanism, { ...credential, salt: Buffer.from(credential.salt), storedKey: Buffer.from(credential.storedKey), serverKey: Buffer.from(credential.serverKey) });
      this.byUser.set(credential.user, mine);
      results.push({ user: credential.user, mechanism: credential.mechanism, error: null });
    }
    return { results };
  }
}
