import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Logger } from 'pino';
import { sqlDirectory } from './sql-files.js';
import { copyRows } from './binary-copy.js';
import { Availability, isUnavailableError } from './availability.js';
import { parseDatabaseUrl, PrimaryRouter, probeWith, type DatabaseTarget, type ServerRole } from './hosts.js';
import { commitInDoubt, statementLatency, watchPool } from '../../../metrics/postgres.js';
import type { Client, ClientConfig, Notice, Pool, PoolClient, QueryConfig, QueryResult, TypeParsers } from 'pg';

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

function statementText(name: string): string {
  const text = STATEMENTS.get(name);
  if (text === undefined) throw new Error(`No SQL statement named "${name}".`);
  return text;
}

export type Row = Record<string, unknown>;

/** Runs named statements, on the pool or inside one transaction. */
export class Statements {
  constructor(
    private readonly runner: { query<R>(q: QueryConfig): Promise<QueryResult<R>> },
    private readonly availability: Availability,
  ) {}

  async run<R = Row>(name: string, values: unknown[] = []): Promise<R[]> {
    const text = statementText(name);
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
  /**
   * Commit only while the server waits for a synchronous standby
   * (synchronous_standby_names set, synchronous_commit on), and make every
   * transaction's commit wait for one, so nothing is acknowledged that lives
   * on one machine only (docs/failover.md). Default: on when the URL names
   * several servers.
   */
  requireSyncStandby?: boolean;
  /**
   * Fetches at least this many records behind the high watermark read their
   * batches from a standby (docs/failover.md). Off when absent, and with a
   * URL of one server.
   */
  standbyReadLagRecords?: number;
}

/** A pool on a standby, for reads that may lag. */
interface StandbyReads {
  pool: Pool;
  statements: Statements;
  availability: Availability;
  minLagRecords: number;
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

/**
 * How connections reach PostgreSQL: straight to the URL's server, or, when
 * the URL names several (or asks for target_session_attrs=read-write), to
 * whichever of them is the primary now (hosts.ts).
 */
export class Connector {
  readonly target: DatabaseTarget;
  readonly router: PrimaryRouter | null;
  private readonly Client: typeof pg.Client;

  /** `wanted`: connections to the primary, or (reads that may lag) to a standby. */
  constructor(
    private readonly url: string,
    readonly timeouts: DatabaseTimeouts,
    wanted: ServerRole = 'primary',
  ) {
    this.target = parseDatabaseUrl(url);
    this.router = this.target.followPrimary ? new PrimaryRouter(this.target.servers, probeWith(clientConfig(this.target.baseUrl, timeouts, { applicationName: 'queen-core-probe' })), wanted) : null;
    this.Client = this.router?.clientClass() ?? pg.Client;
  }

  config(extra: { schema?: string; applicationName?: string } = {}): ClientConfig {
    // A URL of one server is passed on as written: pg reads it as it always has.
    return clientConfig(this.router === null ? this.url : this.target.baseUrl, this.timeouts, extra);
  }

  client(config: ClientConfig): Client {
    return new this.Client(config);
  }

  poolConfig(extra: { schema?: string; applicationName?: string }, max: number): ClientConfig & { max: number; Client: typeof pg.Client } {
    return { ...this.config(extra), max, Client: this.Client };
  }
}

/**
 * Ends a transaction. With a synchronous standby required, one round trip
 * checks that the server would wait for one (else the transaction rolls back,
 * as the error aborts it before COMMIT runs) and writes a small WAL record, so
 * that even a transaction that wrote nothing (a retry the ledgers answered as
 * a duplicate) waits at commit until the standby has everything before it.
 */
const COMMIT = 'COMMIT';
export const NO_SYNC_STANDBY = 'QS001';
const COMMIT_WITH_SYNC_STANDBY = `DO $$ BEGIN
  IF current_setting('synchronous_standby_names') = '' OR current_setting('synchronous_commit') IN ('off', 'local') THEN
    RAISE EXCEPTION 'this PostgreSQL server does not wait for a synchronous standby at commit now' USING ERRCODE = '${NO_SYNC_STANDBY}';
  END IF;
  PERFORM pg_logical_emit_message(true, 'queen-sync', '');
END $$; COMMIT`;

/** SQLSTATE 40003: what a commit in doubt is thrown as (availability.ts takes it for unavailable). */
const STATEMENT_COMPLETION_UNKNOWN = '40003';

/** The warning a commit gets when its wait for the standby is cut short: committed here, maybe not there. */
const SYNC_WAIT_CANCELLED = /wait for synchronous replication/i;

export class Database {
  readonly pool: Pool;
  readonly statements: Statements;
  readonly availability: Availability;

  readonly connector: Connector;
  private readonly commitStatement: string;
  private readonly standby: StandbyReads | null;

  constructor(readonly options: DatabaseOptions) {
    this.connector = new Connector(options.url, options.timeouts);
    const router = this.connector.router;
    // Any sign the server is gone or changed role: the next connection looks for the primary again.
    this.availability = new Availability(options.log ?? null, () => router?.forget());
    this.pool = new pg.Pool(this.connector.poolConfig({ schema: options.schema, applicationName: options.applicationName }, options.poolSize));
    this.standby = options.standbyReadLagRecords === undefined || router === null ? null : this.openStandbyReads(options.standbyReadLagRecords);
    const requireSync = options.requireSyncStandby ?? this.connector.target.servers.length > 1;
    this.commitStatement = requireSync ? COMMIT_WITH_SYNC_STANDBY : COMMIT;
    // An idle client that loses its connection must not crash the process; the pool replaces it.
    this.pool.on('error', () => {});
    this.statements = new Statements(this.pool, this.availability);
    this.stopReporting = watchPool(this.pool);
  }

  private openStandbyReads(minLagRecords: number): StandbyReads {
    const connector = new Connector(this.options.url, this.options.timeouts, 'standby');
    const pool = new pg.Pool(connector.poolConfig({ schema: this.options.schema, applicationName: `${this.options.applicationName}-standby-reads` }, this.options.poolSize));
    pool.on('error', () => {});
    // Its faults are not the database's: the primary answers the read instead, and nothing is logged.
    const availability = new Availability(null, () => connector.router?.forget());
    return { pool, statements: new Statements(pool, availability), availability, minLagRecords };
  }

  /** How far behind the high watermark a read must start to go to a standby; null when reads stay on the primary. */
  get standbyReadLag(): number | null {
    return this.standby?.minLagRecords ?? null;
  }

  /**
   * A read-only statement on a standby, for data below bounds the primary
   * gave (a standby holds a prefix of what the primary committed). Null when
   * no standby answers or it has none of the rows yet: the caller asks the
   * primary then.
   */
  async runOnStandby<R = Row>(name: string, values: unknown[]): Promise<R[] | null> {
    if (this.standby === null) return null;
    try {
      const rows = await this.standby.statements.run<R>(name, values);
      return rows.length > 0 ? rows : null;
    } catch {
      return null;
    }
  }

  /** A binary COPY statement's rows on the primary (see copyRows). */
  async copyRows(name: string, values: readonly (readonly number[])[]): Promise<(Buffer | null)[][]> {
    return copyRows(this.pool, this.availability, name, statementText(name), values);
  }

  /** The same on a standby; null when no standby answers or it has none of the rows yet (as runOnStandby). */
  async copyRowsOnStandby(name: string, values: readonly (readonly number[])[]): Promise<(Buffer | null)[][] | null> {
    if (this.standby === null) return null;
    try {
      const rows = await copyRows(this.standby.pool, this.standby.availability, name, statementText(name), values);
      return rows.length > 0 ? rows : null;
    } catch {
      return null;
    }
  }

  /** Stops this pool's figures being reported (src/metrics/postgres.ts). */
  private readonly stopReporting: () => void;

  /** A client for LISTEN, outside the pool (it holds its connection for good). */
  newClient(): Client {
    const config = this.connector.config({ applicationName: this.options.applicationName });
    // LISTEN runs one statement and then waits for good; only the connect is bounded.
    delete config.query_timeout;
    return this.connector.client(config);
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
      await this.commit(client);
      this.availability.succeeded(mark, true);
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

  /**
   * COMMIT, and an in-doubt outcome said as one. A COMMIT that got no answer
   * (the connection broke, or the wait outlived query_timeout: PostgreSQL's
   * statement_timeout does not cover a commit's wait for the standby) may
   * have committed. Two ways a commit returns success though the standby
   * may not have it: its wait for the standby was
   * cancelled (statement timeout, shutdown), which comes with a warning; or
   * the failover manager turned synchronous replication off while it waited
   * (a standby it judged dead), which releases every waiting commit silently,
   * and is seen by asking the server again after it. Either is answered as
   * unavailable, not acknowledged: the client's retry is answered by the
   * ledgers (producer windows, request ids, dedup keys), in a transaction
   * whose own commit waits for the standby (COMMIT_WITH_SYNC_STANDBY).
   */
  private async commit(client: PoolClient): Promise<void> {
    let cancelledWait: Notice | null = null;
    const onNotice = (notice: Notice): void => {
      if (SYNC_WAIT_CANCELLED.test(notice.message)) cancelledWait ??= notice;
    };
    client.on('notice', onNotice);
    let doubt: string | null = null;
    try {
      await client.query(this.commitStatement);
    } catch (e) {
      // The server may have committed before the answer was lost; a refusal (QS001, a constraint) is no doubt.
      if (!isUnavailableError(e) || (e as { code?: unknown }).code === NO_SYNC_STANDBY) throw e;
      doubt = `no answer to COMMIT: ${(e as Error).message}`;
    } finally {
      client.off('notice', onNotice);
    }
    if (cancelledWait !== null) doubt = (cancelledWait as Notice).message;
    if (doubt === null && this.commitStatement !== COMMIT) {
      // A reload reaches this backend before its next statement: a setting emptied while the commit waited shows here.
      const { rows } = await client.query<{ names: string }>("SELECT current_setting('synchronous_standby_names') AS names");
      if (rows[0]?.names === '') doubt = 'synchronous replication was turned off while the commit waited for the standby';
    }
    if (doubt !== null) {
      commitInDoubt();
      throw Object.assign(new Error(`the commit is in doubt: PostgreSQL may have committed it, or committed it without its synchronous standby (${doubt}); the request's retry is answered from what was stored`), { code: STATEMENT_COMPLETION_UNKNOWN });
    }
  }

  async close(): Promise<void> {
    this.stopReporting();
    await this.standby?.pool.end();
    await this.pool.end();
  }
}
