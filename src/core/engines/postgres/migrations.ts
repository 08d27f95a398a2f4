import { readdirSync, readFileSync } from 'node:fs';
import { sqlDirectory } from './sql-files.js';
import { Connector, DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from './database.js';

/**
 * Numbered migrations (migrations/NNN_name.sql), applied at start in one
 * transaction under an advisory lock, so several cores starting at once on
 * the same database apply each migration exactly once and none reads a
 * half-made schema.
 */

const MIGRATIONS_DIR = sqlDirectory('migrations');
const MIGRATION_FILE = /^(\d{3})_[a-z0-9_]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => MIGRATION_FILE.test(file))
    .sort()
    .map((file) => ({
      version: Number(MIGRATION_FILE.exec(file)![1]),
      name: file,
      sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'),
    }));
}

/** Applies what is missing; returns the names applied. `schema` has been checked by checkSchemaName. */
export async function migrate(url: string, schema: string, timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS): Promise<string[]> {
  const connector = new Connector(url, timeouts);
  const config = connector.config({ schema });
  // A migration may rewrite a large table: only the connect is bounded here (a dead server still fails the start).
  delete config.statement_timeout;
  delete config.query_timeout;
  const client = connector.client(config);
  await client.connect();
  try {
    await client.query('BEGIN');
    // Key space 0 is the migrations'; the schema picks the lock, so schemas migrate independently.
    await client.query('SELECT pg_advisory_xact_lock(0, hashtext($1))', [schema]);
    // Quiet: "already exists, skipping" notices mean nothing here.
    await client.query('SET LOCAL client_min_messages = warning');
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    const done: string[] = [];
    for (const migration of listMigrations()) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      done.push(migration.name);
    }
    await client.query('COMMIT');
    return done;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    await client.end();
  }
}
