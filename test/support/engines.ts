/**
 * The storage engines every end-to-end suite runs against: memory always, and
 * PostgreSQL through the shared test-database harness (./postgres.ts). When no
 * PostgreSQL can be found, the PostgreSQL runs report themselves skipped with
 * the harness's reason; when DATABASE_URL is set (CI) and its server is down,
 * the harness throws and the suite fails, as it should.
 */
import { findTestDatabase, type TestDatabase } from './postgres.js';

export type EngineName = 'memory' | 'postgres';

/** How a gateway should store its data: what the runner turns into options or flags. */
export type EngineChoice = { engine: 'memory' } | { engine: 'postgres'; url: string; schema: string };

export interface EngineMatrixEntry {
  name: EngineName;
  /** Null when this engine can run; else why the suite is skipped. */
  skipReason: string | null;
  /** A fresh, isolated store for one gateway (a new schema for PostgreSQL). */
  fresh(): EngineChoice;
}

let lookup: Promise<Awaited<ReturnType<typeof findTestDatabase>>> | null = null;

/** The memory and PostgreSQL entries, PostgreSQL found once per test file. */
export async function engineMatrix(): Promise<EngineMatrixEntry[]> {
  lookup ??= findTestDatabase();
  const found = await lookup;
  const database: TestDatabase | null = found.database;
  return [
    { name: 'memory', skipReason: null, fresh: () => ({ engine: 'memory' }) },
    {
      name: 'postgres',
      skipReason: found.skipReason,
      fresh: () => {
        if (!database) throw new Error(`no PostgreSQL for the tests: ${found.skipReason}`);
        return { engine: 'postgres', url: database.url, schema: database.freshSchema('queen_e2e') };
      },
    },
  ];
}

/** Drops the schemas handed out by this file's PostgreSQL entry (call from afterAll). */
export async function releaseEngines(): Promise<void> {
  if (!lookup) return;
  const found = await lookup;
  await found.database?.release();
}
