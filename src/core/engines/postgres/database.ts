import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Logger } from 'pino';
import { sqlDirectory } from './sql-files.js';
import { Availability, isUnavailableError } from './availability.js';
import { statementLatency, watchPool } from '../../../metrics/postgres.js';
import type { Client, ClientConfig, Pool, PoolClient, QueryConfig, QueryResult, TypeParsers } from 'pg';

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

const STATEMENTS = loadStatements(['queues', 'log', 'producers', 'groups', 'kv', 'native', 'maintenance', 'kafka-transactions', 'compaction', 'scram-credentials', 'access', 'coordination', 'shares']);

export type Row = Record<string, unknown>;

/** Runs named statements, on the pool or inside one transaction. */
export class Statements {
  constructor(
    private readonly runner: { query<R>(q: QueryConfig): Promise<QueryResult<R>> },
    private readonly availability: Availability,
  ) {}

  async run<R = Row>(name: string, values: unknown[] = []): Promise<R[]> {
    const text = STATEMENTS.get(name);
    if (text === undefined) throw new Error(`No SQL statement named "${name}".`);
    let result: QueryResult<R>;
    const mark = this.availability.begin();
    const started = performance.now();
    try {
      // Named: each connection parses and plans a statement once.
      result = await this.runner.query<R>({ name, text, values });
    } catch (e) {
      throw this.availability.translate(e);
    } finally {
      statementLatency(name).observe((performance.now() - started) / 1000);
    }
    this.availability.succeeded(mark);
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
  timeouts: DatabaseTimeouts;
  /** Where a fault episode is logged (availability.ts); none when absent. */
  log?: Logger;
}

export interface DatabaseTimeouts {
  /** How long opening a connection, or waiting for a free one in the pool, may take. */
  connectTimeoutMs: number;
  /**
   * How long one statement may run: PostgreSQL's statement_timeout, and the
   * same wait on this side, which is what ends a call to a server that stopped
   * answering altogether (a frozen process never cancels anything itself).
   */
  statementTimeoutMs: number;
}

/**
 * Defaults: a connect on loopback or a LAN takes milliseconds, so 5 s means
 * the server is not there. Statements of this engine take milliseconds too;
 * 10 s leaves room for a slow disk and still answers well inside the 30 s
 * request timeouts of Kafka clients, so a client gets a retriable code from
 * the gateway rather than timing the connection out itself.
 */
export const DEFAULT_DATABASE_TIMEOUTS: Readonly<DatabaseTimeouts> = Object.freeze({ connectTimeoutMs: 5_000, statementTimeoutMs: 10_000 });

/** The connection settings every client of the engine uses: timeouts, and int8 as numbers. */
export function clientConfig(url: string, timeouts: DatabaseTimeouts, extra: { schema?: string; applicationName?: string } = {}): ClientConfig {
  return {
    connectionString: url,
    types: numberTypes,
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    statement_timeout: timeouts.statementTimeoutMs,
    // A second longer than the server's own limit, so a live server's cancellation (57014) is what normally ends a slow statement.
    query_timeout: timeouts.statementTimeoutMs + 1_000,
    // A dead peer on a quiet connection is noticed by the kernel rather than never.
    keepAlive: true,
    ...(extra.schema === undefined ? {} : { options: `-c search_path=${extra.schema}` }),
    ...(extra.applicationName === undefined ? {} : { application_name: extra.applicationName }),
  };
}

export class Database {
  readonly pool: Pool;
  readonly statements: Statements;
  readonly availability: Availability;

  constructor(readonly options: DatabaseOptions) {
    this.availability = new Availability(options.log ?? null);
    this.pool = new pg.Pool({
      ...clientConfig(options.url, options.timeouts, { schema: options.schema, applicationName: options.applicationName }),
      max: options.poolSize,
    });
    // An idle client that loses its connection must not crash the process; the pool replaces it.
    this.pool.on('error', () => {});
    this.statements = new Statements(this.pool, this.availability);
    this.stopReporting = watchPool(this.pool);
  }

  /** Stops this pool's figures being reported (src/metrics/postgres.ts). */
  private readonly stopReporting: () => void;

  /** A client for LISTEN, outside the pool (it holds its connection for good). */
  newClient(): Client {
    const config = clientConfig(this.options.url, this.options.timeouts, { applicationName: this.options.applicationName });
    // LISTEN runs one statement and then waits for good; only the connect is bounded.
    delete config.query_timeout;
    return new pg.Client(config);
  }

  /**
   * Runs `work` in one transaction; a throw rolls everything back. A
   * connection that failed (broke, timed out) is discarded rather than
   * returned to the pool, where its next user would find it mid-statement.
   */
  async transaction<T>(work: (tx: Statements, client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    const mark = this.availability.begin();
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw this.availability.translate(e);
    }
    // A checked-out client's socket error has no other listener and would end the process.
    let broken: unknown = null;
    const onError = (e: unknown): void => {
      broken ??= e;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(new Statements(client, this.availability), client);
      await client.query('COMMIT');
      this.availability.succeeded(mark);
      return result;
    } catch (e) {
      if (broken !== null || isUnavailableError(e)) {
        broken ??= e;
        // No ROLLBACK on a broken connection: it would wait out the timeout again; the server rolls back when the connection goes.
        throw this.availability.translate(e);
      }
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError;
      });
      throw e;
    } finally {
      client.off('error', onError);
      client.release(broken === null ? undefined : (broken as Error));
    }
  }

  async close(): Promise<void> {
    this.stopReporting();
    await this.pool.end();
  }
}
