import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { QueenCore } from '../core/queen-core.js';
import { Connection } from './connection.js';
import type { ApiHandler, GatewaySettings } from './handler.js';
import { handlers as allHandlers } from './handlers/index.js';
import { HandlerRegistry } from './registry.js';

/**
 * The Kafka TCP server: accepts connections up to a limit, hands each to a
 * Connection, and shuts down gracefully (stop accepting, let in-flight
 * requests answer up to a deadline, then close what is left).
 */

export interface ServerLimits {
  /** Largest request frame accepted; a bigger size prefix closes the connection before anything is allocated. */
  maxFrameBytes: number;
  maxConnections: number;
  /** Connections with no traffic and nothing in flight for this long are closed; 0 = never. */
  idleTimeoutMs: number;
  /** Reading from a connection pauses while this many of its requests are unanswered. */
  maxInFlightPerConnection: number;
}

export const DEFAULT_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxFrameBytes: 100 * 1024 * 1024,
  maxConnections: 10_000,
  // Kafka's connections.max.idle.ms.
  idleTimeoutMs: 600_000,
  maxInFlightPerConnection: 100,
});

/** What every connection of one gateway shares. */
export interface GatewayRuntime {
  core: QueenCore;
  settings: GatewaySettings;
  limits: ServerLimits;
  log: Logger;
  registry: HandlerRegistry;
  shared: Map<string, unknown>;
}

export interface GatewayOptions {
  core: QueenCore;
  settings: GatewaySettings;
  limits?: Partial<ServerLimits>;
  log: Logger;
  /** Defaults to every handler in ./handlers/index.ts. */
  handlers?: readonly ApiHandler[];
}

export class GatewayServer {
  private readonly runtime: GatewayRuntime;
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private nextConnectionId = 1;
  private closing: Promise<void> | null = null;

  constructor(options: GatewayOptions) {
    // Codecs compile on first use (well under a millisecond each) rather than
    // all up front, which would cost most of a second before the first client.
    this.runtime = {
      core: options.core,
      settings: options.settings,
      limits: { ...DEFAULT_LIMITS, ...options.limits },
      log: options.log,
      registry: new HandlerRegistry(options.handlers ?? allHandlers),
      shared: new Map(),
    };
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Starts listening; resolves to the bound address (port 0 picks a free one). */
  listen(host: string, port: number): Promise<{ host: string; port: number }> {
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

  /** Stops accepting, lets in-flight requests answer for up to `graceMs`, then closes every connection. */
  close(graceMs = 5_000): Promise<void> {
    this.closing ??= this.shutDown(graceMs);
    return this.closing;
  }

  private async shutDown(graceMs: number): Promise<void> {
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
    const connection = new Connection(socket, this.nextConnectionId++, this.runtime, (c) => {
      this.connections.delete(c);
      if (this.connections.size === 0) this.onLastConnection?.();
    });
    this.connections.add(connection);
  }
}
