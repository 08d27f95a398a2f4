import pg from 'pg';
import type { Client, ClientConfig } from 'pg';
import { CoreError } from '../../errors.js';

/**
 * Following the primary of a replicated PostgreSQL (docs/failover.md).
 *
 * libpq reads a URL naming several servers,
 * `postgres://u:p@h1:5432,h2:5432,h3:5432/db?target_session_attrs=read-write`,
 * and connects to the first one that accepts writes. node-postgres parses one
 * host only, and the engine keeps pg for its speed (DRIVER.md). So the routing
 * is done here, with no process in between (an HAProxy or the failover
 * manager's API would be one more thing to run and to fail): the router asks
 * the servers in turn which one is the primary (`pg_is_in_recovery()` and
 * `transaction_read_only`, as libpq does), remembers it, and every new
 * connection goes there and checks it again before its first use. A fault
 * makes the router forget, and the next connection asks again. While no server
 * accepts writes, connecting fails with CoreError('unavailable'): Kafka
 * clients get retriable codes and the HTTP API 503 with Retry-After.
 */

export interface ServerAddress {
  host: string;
  port: number;
}

export interface DatabaseTarget {
  /** The URL with the first server only: what pg parses for the user, password, database and options. */
  baseUrl: string;
  servers: ServerAddress[];
  /** Whether connections must go to the server that accepts writes (several servers, or target_session_attrs=read-write). */
  followPrimary: boolean;
}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/;
const WRITABLE_ATTRS = new Set(['read-write', 'primary']);

function parseServer(text: string, url: string): ServerAddress {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const plain = /^([^:]*)(?::(\d+))?$/.exec(text);
  const match = bracketed ?? plain;
  if (match === null || match[1] === '') throw new Error(`The database URL's host list has an entry ${JSON.stringify(text)} that is not host or host:port; write postgres://user@h1:5432,h2:5432/db.`);
  const port = match[2] === undefined ? 5432 : Number(match[2]);
  if (!(port > 0 && port < 65536)) throw new Error(`The database URL names port ${match[2]}, which is not a TCP port (1-65535): ${redact(url)}.`);
  return { host: decodeURIComponent(match[1]!), port };
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}

/** Reads the server list and target_session_attrs of a PostgreSQL URL, as libpq does. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const parts = URL_PARTS.exec(url);
  if (parts === null) return { baseUrl: url, servers: [], followPrimary: false };
  const [, scheme, userinfo = '', hostList = '', rest = ''] = parts;
  const servers = hostList === '' ? [] : hostList.split(',').map((entry) => parseServer(entry, url));
  const [path = '', query] = splitOnce(rest, '?');
  const params = new URLSearchParams(query ?? '');
  const attrs = params.get('target_session_attrs');
  params.delete('target_session_attrs');
  if (attrs !== null && attrs !== 'any' && !WRITABLE_ATTRS.has(attrs)) {
    throw new Error(`target_session_attrs=${attrs} cannot serve the core, which writes; use read-write (or leave it out).`);
  }
  const followPrimary = servers.length > 1 || (attrs !== null && WRITABLE_ATTRS.has(attrs));
  const first = servers[0];
  const firstText = first === undefined ? hostList : first.host.includes(':') ? `[${first.host}]:${first.port}` : `${encodeURIComponent(first.host)}:${first.port}`;
  const queryText = params.toString();
  return { baseUrl: `${scheme}${userinfo}${firstText}${path}${queryText === '' ? '' : `?${queryText}`}`, servers, followPrimary };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

export type ServerRole = 'primary' | 'standby';

/** What a connected session says about its server: a standby, or a primary set read-only, is not for writes. */
export async function roleOf(client: Pick<Client, 'query'>): Promise<ServerRole> {
  const { rows } = await client.query<{ standby: boolean; read_only: string }>("SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') AS read_only");
  const row = rows[0]!;
  return row.standby || row.read_only === 'on' ? 'standby' : 'primary';
}

/** Asks one server for its role over a connection of its own; throws when it cannot be reached. */
export type RoleProbe = (server: ServerAddress) => Promise<ServerRole>;

export function probeWith(config: ClientConfig): RoleProbe {
  return async (server) => {
    const client = new pg.Client({ ...config, statement_timeout: config.connectionTimeoutMillis, query_timeout: config.connectionTimeoutMillis });
    // The URL in config names the first server; pg takes its host over a host option, so the address is set after.
    aim(client, server);
    client.on('error', () => {});
    try {
      await client.connect();
      return await roleOf(client);
    } finally {
      await client.end().catch(() => {});
    }
  };
}

export class PrimaryRouter {
  private known: ServerAddress | null = null;
  private search: Promise<ServerAddress> | null = null;

  /** `wanted`: the primary, or (for reads that may lag, database.ts) a standby. */
  constructor(
    readonly servers: readonly ServerAddress[],
    private readonly probe: RoleProbe,
    readonly wanted: ServerRole = 'primary',
  ) {
    if (servers.length === 0) throw new Error('The database URL names no server; write postgres://user@host:5432/db.');
  }

  /** The server of the wanted role (the primary unless told): the one remembered, or the first of the list that says so now. One search at a time. */
  async primary(): Promise<ServerAddress> {
    if (this.known !== null) return this.known;
    this.search ??= this.find().finally(() => (this.search = null));
    return this.search;
  }

  /** A fault on the way to `server` (or anywhere, when absent): the next connection asks the servers again. */
  forget(server?: ServerAddress): void {
    if (server === undefined || (this.known !== null && sameServer(this.known, server))) this.known = null;
  }

  private async find(): Promise<ServerAddress> {
    const answers: string[] = [];
    for (const server of this.servers) {
      try {
        const role = await this.probe(server);
        if (role === this.wanted) {
          this.known = server;
          return server;
        }
        answers.push(role === 'primary' ? `${describeServer(server)} is the primary` : `${describeServer(server)} is a standby or read-only`);
      } catch (e) {
        answers.push(`${describeServer(server)}: ${(e as Error).message ?? String(e)}`);
      }
    }
    if (this.wanted === 'standby') throw new CoreError('unavailable', `No PostgreSQL standby answers now (${answers.join('; ')}).`);
    throw new CoreError('unavailable', `No PostgreSQL server accepts writes now (${answers.join('; ')}); a failover may be under way: retry in a moment.`);
  }

  /** A pg.Client class whose connect() goes to the primary, for a pool (`Client` option) or alone. */
  clientClass(): typeof pg.Client {
    const router = this;
    return class PrimaryClient extends pg.Client {
      constructor(...args: ConstructorParameters<typeof pg.Client>) {
        super(...args);
        // The server may end the connection while no query runs and no pool listens: between the
        // router's role check and the pool taking the client, or while a caller holds it. A demoted
        // primary restarting says "terminating connection due to administrator command" then, and an
        // 'error' event nobody listens to ends the process. The next query fails instead, and the
        // pool drops a client that is no longer queryable when it comes back.
        this.on('error', () => router.forget());
      }

      override connect(callback?: (error: Error | null) => void): Promise<void> {
        const connecting = router.connectTo(this, () => super.connect());
        if (callback === undefined) return connecting;
        connecting.then(() => callback(null), (e: Error) => callback(e));
        return connecting.catch(() => {});
      }
    } as typeof pg.Client;
  }

  private async connectTo(client: Client, connect: () => Promise<void>): Promise<void> {
    const server = await this.primary();
    const socket = (client as unknown as { connection: { stream: { destroyed?: boolean } } }).connection.stream;
    // The pool's connect timeout may have cut the socket while the search ran.
    if (socket.destroyed === true) throw new Error('timeout expired while looking for the PostgreSQL primary');
    aim(client, server);
    try {
      await connect();
    } catch (e) {
      this.forget(server);
      throw e;
    }
    // The primary may have become a standby since it was found: check before the connection is used.
    let role: ServerRole;
    try {
      role = await roleOf(client);
    } catch (e) {
      this.forget(server);
      await client.end().catch(() => {});
      throw e;
    }
    if (role !== this.wanted) {
      this.forget(server);
      await client.end().catch(() => {});
      throw new CoreError('unavailable', this.wanted === 'primary' ? `PostgreSQL at ${describeServer(server)} no longer accepts writes; a failover is under way: retry in a moment.` : `PostgreSQL at ${describeServer(server)} is no longer a standby.`);
    }
  }
}

/** Points a client not yet connected at `server` (pg connects to its host and port fields). */
function aim(client: Client, server: ServerAddress): void {
  const fields = client as unknown as { host: string; port: number };
  fields.host = server.host;
  fields.port = server.port;
}

function sameServer(a: ServerAddress, b: ServerAddress): boolean {
  return a.host === b.host && a.port === b.port;
}

export function describeServer(server: ServerAddress): string {
  return server.host.includes(':') ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`;
}
