/**
 * The part of node-postgres (pg 8) this engine uses. pg ships no types and
 * @types/pg is not a dependency; declaring only what is called keeps the
 * compiler honest about it.
 */
declare module 'pg' {
  import type { EventEmitter } from 'node:events';

  export interface QueryResult<R = Record<string, unknown>> {
    rows: R[];
    rowCount: number | null;
  }

  export interface QueryConfig {
    text: string;
    name?: string;
    values?: unknown[];
  }

  export interface TypeParsers {
    getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown;
  }

  export interface ClientConfig {
    connectionString?: string;
    host?: string;
    port?: number;
    options?: string;
    types?: TypeParsers;
    application_name?: string;
    connectionTimeoutMillis?: number;
    /** Server-side statement_timeout, in ms. */
    statement_timeout?: number;
    /** Client-side wait for a query's answer, in ms. */
    query_timeout?: number;
    keepAlive?: boolean;
  }

  export interface PoolConfig extends ClientConfig {
    max?: number;
    /** The client class the pool makes its connections with. */
    Client?: typeof Client;
    idleTimeoutMillis?: number;
  }

  export interface Notification {
    processId: number;
    channel: string;
    payload?: string;
  }

  export interface DatabaseError extends Error {
    code?: string;
  }

  /** A NoticeResponse (a WARNING or NOTICE the server sent beside a statement's answer). */
  export interface Notice extends Error {
    code?: string;
    severity?: string;
    detail?: string;
  }

  /**
   * A query object that drives the protocol itself (how pg-cursor and COPY
   * streams plug in): pg calls submit() when the connection is its, then the
   * handlers for the server's messages; it answers through `callback`.
   */
  export interface Submittable<T> {
    callback?: (error: Error | null, result?: T) => void;
    submit(connection: { query(text: string): void }): void;
  }

  export class Client extends EventEmitter {
    constructor(config?: ClientConfig);
    connect(): Promise<void>;
    query<R = Record<string, unknown>>(query: string | QueryConfig, values?: unknown[]): Promise<QueryResult<R>>;
    end(): Promise<void>;
    on(event: 'notification', listener: (message: Notification) => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: 'end', listener: () => void): this;
    on(event: 'notice', listener: (notice: Notice) => void): this;
  }

  export interface PoolClient {
    query<T>(query: Submittable<T>): Promise<T>;
    query<R = Record<string, unknown>>(query: string | QueryConfig, values?: unknown[]): Promise<QueryResult<R>>;
    release(destroy?: boolean | Error): void;
    on(event: 'error', listener: (error: Error) => void): this;
    off(event: 'error', listener: (error: Error) => void): this;
    on(event: 'notice', listener: (notice: Notice) => void): this;
    off(event: 'notice', listener: (notice: Notice) => void): this;
  }

  export class Pool extends EventEmitter {
    constructor(config?: PoolConfig);
    connect(): Promise<PoolClient>;
    query<T>(query: Submittable<T>): Promise<T>;
    query<R = Record<string, unknown>>(query: string | QueryConfig, values?: unknown[]): Promise<QueryResult<R>>;
    end(): Promise<void>;
    on(event: 'error', listener: (error: Error, client: PoolClient) => void): this;
    /** Connections open, open and free, and callers queued for one (read for the metrics). */
    readonly totalCount: number;
    readonly idleCount: number;
    readonly waitingCount: number;
  }

  export const types: TypeParsers;

  const pg: {
    Client: typeof Client;
    Pool: typeof Pool;
    types: TypeParsers;
  };
  export default pg;
}
