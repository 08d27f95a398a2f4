import { readFileSync } from 'node:fs';
import pg from 'pg';
import { sqlDirectory } from './sql-files.js';
import type { Client, Pool, PoolClient, QueryConfig, QueryResult, TypeParsers } from 'pg';

/**
 * The engine's connection to PostgreSQL: a pool on one schema (search_path),
 * the named SQL statements from ./sql/*.sql, and transactions.
 *
 * int8 columns come back as JS numbers (offsets and times are safe integers
 * by the Core's contract), through a per-pool parser so no other pg user in
 * the process is affected.
 */

const INT8 = 20;
const INT8_ARRAY = 1016;

const numberTypes: TypeParsers = {
  getTypeParser(oid, format) {
    if (oid === INT8) return (value: string) => Number(value);
    if (oid === INT8_ARRAY) {
      const parseArray = pg.types.getTypeParser(oid, format);
      return (value: string) => (parseArray(value) as (string | null)[]).map((v) => (v === null ? null : Number(v)));
    }
    return pg.types.getTypeParser(oid, format);
  },
};

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(`PostgreSQL schema name ${JSON.stringify(schema)} must be lower-case letters, digits and '_', starting with a letter or '_', at most 63 characters.`);
  }
  return schema;
}

/** Statements by name, from `-- name: x` sections of the .sql files beside this one. */
function loadStatements(files: string[]): Map<string, string> {
  const statements = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(new URL(`${file}.sql`, sqlDirectory('sql')), 'utf8');
    for (const section of text.split(/^-- name: /m).slice(1)) {
      const newline = section.indexOf('\n');
      const name = section.slice(0, newline).trim();
      if (statements.has(name)) throw new Error(`SQL statement "${name}" is defined twice.`);
      statements.set(name, section.slice(newline + 1).trim().replace(/;$/, ''));
    }
  }
  return statements;
}

const STATEMENTS = loadStatements(['queues', 'log', 'producers', 'groups', 'kv', 'native', 'maintenance']);

export type Row = Record<string, unknown>;

/** Runs named statements, on the pool or inside one transaction. */
export class Statements {
  constructor(private readonly runner: { query<R>(q: QueryConfig): Promise<QueryResult<R>> }) {}

  async run<R = Row>(name: string, values: unknown[] = []): Promise<R[]> {
    const text = STATEMENTS.get(name);
    if (text === undefined) throw new Error(`No SQL statement named "${name}".`);
    // Named: each connection parses and plans a statement once.
    const result = await this.runner.query<R>({ name, text, values });
    return result.rows;
  }

  async one<R = Row>(name: string, values: unknown[] = []): Promise<R | null> {
    return (await this.run<R>(name, values))[0] ?? null;
  }
}

export interface DatabaseOptions {
  url: string;
  schema: string;
  poolSize: number;
  applicationName: string;
}

export class Database {
  readonly pool: Pool;
  readonly statements: Statements;

  constructor(readonly options: DatabaseOptions) {
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      types: numberTypes,
      options: `-c search_path=${options.schema}`,
      application_name: options.applicationName,
    });
    // An idle client that loses its connection must not crash the process; the pool replaces it.
    this.pool.on('error', () => {});
    this.statements = new Statements(this.pool);
  }

  /** A client for LISTEN, outside the pool (it holds its connection for good). */
  newClient(): Client {
    return new pg.Client({ connectionString: this.options.url, types: numberTypes, application_name: this.options.applicationName });
  }

  /** Runs `work` in one transaction; a throw rolls everything back. */
  async transaction<T>(work: (tx: Statements, client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(new Statements(client), client);
      await client.query('COMMIT');
      return result;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
