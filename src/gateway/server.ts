import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { QueenCore } from '../core/queen-core.js';
import { Authorizer, AUTHORIZATION_OFF, type AuthorizationSettings } from './authorizer.js';
import { Connection } from './connection.js';
import type { ApiHandler, GatewaySettings } from './handler.js';
import { handlers as allHandlers } from './handlers/index.js';
import { HandlerRegistry } from './registry.js';
import { RequestBudget } from './request-budget.js';
import { DEFAULT_QUOTA_SETTINGS, QuotaManager, type QuotaSettings } from './quotas.js';

/**
 * The Kafka TCP server: accepts connections up to a limit, hands each to a
 * Connection, and shuts down gracefully (stop accepting, let in-flight
 * requests answer up to a deadline, then close what is left).
 */

export interface ServerLimits {
  /** Largest request frame accepted; a bigger size prefix closes the connection before anything is allocated. */
  maxFrameBytes: number;
  maxConnections: number;
  /** Connections accepted at once from one IP address. */
  maxConnectionsPerIp: number;
  /** Connections with no traffic and nothing in flight for this long are closed; 0 = never. */
  idleTimeoutMs: number;
  /** A frame, once begun, must arrive whole within this long (time paused by the gateway aside); 0 = no deadline. */
  frameTimeoutMs: number;
  /** Reading from a connection pauses while this many of its requests are unanswered. */
  maxInFlightPerConnection: number;
  /**
   * Request bytes held at once across all connections (frames being read and
   * requests being handled); past it, connections stop reading until room is
   * made. At least maxFrameBytes.
   */
  maxBufferedBytes: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxFrameBytes: 100 * MIB,
  maxConnections: 10_000,
  // Kafka's max.connections.per.ip is unlimited; a tenth of the total keeps one
  // host from taking every slot while leaving room for test suites that open
  // hundreds of clients on loopback.
  maxConnectionsPerIp: 1_000,
  // Kafka's connections.max.idle.ms.
  idleTimeoutMs: 600_000,
  // librdkafka's socket.timeout.ms: a client has given up on a request by then.
  frameTimeoutMs: 60_000,
  maxInFlightPerConnection: 100,
  // Two and a half maximum frames: room for large produce batches from a few
  // clients at once, a bound the process can always afford.
  maxBufferedBytes: 256 * MIB,
});

/** Checks limits given to the library; the CLI's settings check the same before anything starts. */
export function checkLimits(limits: ServerLimits): ServerLimits {
  if (limits.maxBufferedBytes < limits.maxFrameBytes) {
    throw new Error(
      `maxBufferedBytes (${limits.maxBufferedBytes}) is below maxFrameBytes (${limits.maxFrameBytes}); a frame of the largest size could never be read. Raise maxBufferedBytes or lower maxFrameBytes.`,
    );
  }
  return limits;
}

/** What every connection of one gateway shares. */
export interface GatewayRuntime {
  core: QueenCore;
  settings: GatewaySettings;
  limits: ServerLimits;
  log: Logger;
  registry: HandlerRegistry;
  shared: Map<string, unknown>;
  /** Request bytes held across all connections (request-budget.ts). */
  budget: RequestBudget;
  authorizer: Authorizer;
  quotas: QuotaManager;
}

export interface GatewayOptions {
  core: QueenCore;
  settings: GatewaySettings;
  limits?: Partial<ServerLimits>;
  log: Logger;
  /** Defaults to every handler in ./handlers/index.ts. */
  handlers?: readonly ApiHandler[];
  /** ACLs (authorizer.ts); off by default. */
  authorization?: Partial<AuthorizationSettings>;
  /** Client quotas' refresh and measuring windows (quotas.ts). */
  quotas?: Partial<QuotaSettings>;
}

export class GatewayServer {
  private readonly runtime: GatewayRuntime;
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  /** Open connections per remote IP; an IP at its cap is logged once until it drops below. */
  private readonly perIp = new Map<string, { open: number; refusalLogged: boolean }>();
  private nextConnectionId = 1;
  private closing: Promise<void> | null = null;

  constructor(options: GatewayOptions) {
    // Codecs compile on first use (well under a millisecond each) rather than
    // all up front, which would cost most of a second before the first client.
    const limits = checkLimits({ ...DEFAULT_LIMITS, ...options.limits });
    this.runtime = {
      core: options.core,
      settings: options.settings,
      limits,
      log: options.log,
      registry: new HandlerRegistry(options.handlers ?? allHandlers),
      shared: new Map(),
      budget: new RequestBudget(limits.maxBufferedBytes),
      authorizer: new Authorizer(options.core, { ...AUTHORIZATION_OFF, ...options.authorization }, options.log),
      quotas: new QuotaManager(options.core, { ...DEFAULT_QUOTA_SETTINGS, ...options.quotas }, options.log),
    };
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Starts listening; resolves to the bound address (port 0 picks a free one). */
  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    // ACLs and quotas in force before the first client is served.
    await Promise.all([this.runtime.authorizer.start(), this.runtime.quotas.start()]);
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.server.once('error', onError);
      this.server.listen({ host, port }, () => {
        this.server.off('error', onError);
        const address = this.server.address() as AddressInfo;
        resolve({ host: address.address, port: address.port });
      });
    });
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Request bytes held across connections right now (frames being read, requests being handled). */
  get bufferedRequestBytes(): number {
    return this.runtime.budget.heldBytes;
  }

  /** Stops accepting, lets in-flight requests answer for up to `graceMs`, then closes every connection. */
  close(graceMs = 5_000): Promise<void> {
    this.closing ??= this.shutDown(graceMs);
    return this.closing;
  }

  private async shutDown(graceMs: number): Promise<void> {
    this.runtime.authorizer.stop();
    this.runtime.quotas.stop();
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const connection of this.connections) connection.drain();
    if (this.connections.size > 0) {
      const drained = new Promise<void>((resolve) => (this.onLastConnection = resolve));
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([drained, deadline]);
      clearTimeout(timer);
      for (const connection of this.connections) connection.close(`still busy ${graceMs} ms into shutdown`, 'warn');
    }
    await stopped;
  }

  private onLastConnection: (() => void) | null = null;

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (this.connections.size >= this.runtime.limits.maxConnections) {
      this.runtime.log.warn(
        { remote: `${socket.remoteAddress}:${socket.remotePort}`, maxConnections: this.runtime.limits.maxConnections },
        'connection refused: the gateway is at its maximum number of connections',
      );
      socket.destroy();
      return;
    }
    const ip = socket.remoteAddress ?? '?';
    const fromIp = this.perIp.get(ip) ?? { open: 0, refusalLogged: false };
    if (fromIp.open >= this.runtime.limits.maxConnectionsPerIp) {
      if (!fromIp.refusalLogged) {
        fromIp.refusalLogged = true;
        this.runtime.log.warn(
          { remote: ip, maxConnectionsPerIp: this.runtime.limits.maxConnectionsPerIp },
          'connections refused: this address is at its maximum number of connections (logged once until it drops below)',
        );
      }
      socket.destroy();
      return;
    }
    fromIp.open++;
    this.perIp.set(ip, fromIp);
    const connection = new Connection(socket, this.nextConnectionId++, this.runtime, (c) => {
      this.connections.delete(c);
      if (--fromIp.open === 0) this.perIp.delete(ip);
      else fromIp.refusalLogged = false;
      if (this.connections.size === 0) this.onLastConnection?.();
    });
    this.connections.add(connection);
  }
}
