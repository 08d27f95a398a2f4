/**
 * The PostgreSQL engine's SCRAM credentials (table scram_credentials,
 * migration 005; statements in sql/scram-credentials.sql). See
 * ../../rules/scram-credentials.ts for what is kept and why.
 */
import {
  type AlterScramCredentialsRequest,
  type AlterScramCredentialsResult,
  type ScramCredential,
  type ScramCredentialRef,
  type ScramMechanism,
  type ScramUser,
} from '../../core.js';
import type { Database } from './database.js';

interface InfoRow {
  user_name: string;
  mechanism: ScramMechanism;
  iterations: number;
}

export class PostgresScramCredentials {
  constructor(private readonly db: Database) {}

  async describe(req: { users?: string[] | null }): Promise<{ users: ScramUser[] }> {
    const wanted = req.users ?? null;
    const rows = wanted === null ? await this.db.statements.run<InfoRow>('scram-list-users') : await this.db.statements.run<InfoRow>('scram-describe-users', [wanted]);
    const byUser = new Map<string, ScramUser>((wanted ?? []).map((user) => [user, { user, credentials: [] }]));
    for (const row of rows) {
      const entry = byUser.get(row.user_name) ?? { user: row.user_name, credentials: [] };
      entry.credentials.push({ mechanism: row.mechanism, iterations: row.iterations });
      byUser.set(row.user_name, entry);
    }
    return { users: [...byUser.values()] };
  }

  async get(req: ScramCredentialRef): Promise<ScramCredential | null> {
    const { user } = req;
    const { mechanism } = req;
    const row = await this.db.statements.one<{ iterations: number; salt: Buffer; stored_key: Buffer; server_key: Buffer }>('scram-get', [user, mechanism]);
    return row && { user, mechanism, iterations: row.iterations, salt: row.salt, storedKey: row.stored_key, serverKey: row.server_key };
  }

  /** All of one request's changes commit together. */
  async alter(req: AlterScramCredentialsRequest): Promise<AlterScramCredentialsResult> {
    const { deletions, upsertions } = req;
    return this.db.transaction(async (tx) => {
      const results: AlterScramCredentialsResult['results'] = [];
      for (const { user, mechanism } of deletions) {
        const deleted = await tx.run('scram-delete', [user, mechanism]);
        results.push({ user, mechanism, error: deleted.length > 0 ? null : 'not_found' });
      }
      for (const c of upsertions) {
        await tx.run('scram-upsert', [c.user, c.mechanism, c.iterations, c.salt, c.storedKey, c.serverKey]);
        results.push({ user: c.user, mechanism: c.mechanism, error: null });
      }
      return results;
    }).then((results) => ({ results }));
  }
}
