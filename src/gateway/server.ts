import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { ClusterView } from '../cluster/membership.js';
import type { Core } from '../core/index.js';
import { Authorizer, AUTHORIZATION_OFF, type AuthorizationSettings } from '../access/authorizer.js';
import { Connection } from './connection.js';
import type { GatewayRuntime, ListenerRuntime } from './runtime.js';
import { checkLimits, DEFAULT_LIMITS, type ServerLimits } from './limits.js';
import type { ApiHandler, GatewaySettings } from './handler.js';
import { handlers as allHandlers } from './handlers/index.js';
import { usesSasl, usesTls, type ListenerSpec, type SecurityProtocol } from './listeners.js';
import { HandlerRegistry } from './registry.js';
import { RequestBudget } from './request-budget.js';
import { DEFAULT_QUOTA_SETTINGS, QuotaManager, type QuotaSettings } from './quotas.js';
import type { SaslSettings } from './sasl/authenticator.js';
import { certificatePrincipal, type TlsCredentials } from './tls.js';
import { listenerMetrics, watchConnections, type ListenerMetrics } from '../metrics/kafka.js';

/**
 * The Kafka server: one or more listeners (PLAINTEXT, SSL, SASL_PLAINTEXT,
 * SASL_SSL; ./listeners.ts), connections accepted up to a limit across all of
 * them, each handed to a Connection; graceful shutdown (stop accepting, let
 * in-flight requests answer up to a deadline, then close what is left).
 */

export interface GatewayOptions {
  core: Core;
  /** The advertised address in it is the first listener's; each listener gets its own copy (listenOn). */
  settings: GatewaySettings;
  limits?: Partial<ServerLimits>;
  log: Logger;
  /** Defaults to every handler in ./handlers/index.ts. */
  handlers?: readonly ApiHandler[];
  /** ACLs (src/access/authorizer.ts); off by default. */
  authorization?: Partial<AuthorizationSettings>;
  /** Client quotas' refresh and measuring windows (quotas.ts). */
  quotas?: Partial<QuotaSettings>;
  /** Certificates for SSL and SASL_SSL listeners. */
  tls?: TlsCredentials;
  /** Mechanisms and sessions for SASL_PLAINTEXT and SASL_SSL listeners. */
  sasl?: SaslSettings;
}

export interface BoundListener {
  name: SecurityProtocol;
  host: string;
  port: number;
  /** What Metadata answers on this listener. */
  advertised: { host: string; port: number };
}

export class GatewayServer {
  private readonly runtime: GatewayRuntime;
  private readonly servers: Array<{ server: Server; stopReloads?: () => void }> = [];
  /** Each listener's settings (its own advertised address), so a node id chosen after binding reaches all of them. */
  private readonly listenerSettings: GatewaySettings[] = [];
  private readonly connections = new Set<Connection>();
  /** Open connections per remote IP; an IP at its cap is logged once until it drops below. */
  private readonly perIp = new Map<string, { open: number; refusalLogged: boolean }>();
  private nextConnectionId = 1;
  private closing: Promise<void> | null = null;
  /** Connections accepted before this cluster member joined, held unread until it has (holdConnectionsUntilJoined). */
  private held: { socket: Socket; listener: ListenerRuntime; principal: string | null }[] | null = null;
  /** Connection counts per listener, and this server's open connections counted when /metrics is scraped. */
  private readonly listenerMetrics = new Map<string, ListenerMetrics>();
  private readonly stopCounting = watchConnections({
    forEachConnection: (visit) => {
      for (const c of this.connections) visit(c.state.listener, c.state.principal);
    },
  });

  constructor(private readonly options: GatewayOptions) {
    // Codecs compile on first use (well under a millisecond each) rather than
    // all up front, which would cost most of a second before the first client.
    const limits = checkLimits({ ...DEFAULT_LIMITS, ...options.limits });
    this.runtime = {
      core: options.core,
      limits,
      log: options.log,
      registry: new HandlerRegistry(options.handlers ?? allHandlers),
      shared: new Map(),
      budget: new RequestBudget(limits.maxBufferedBytes),
      authorizer: new Authorizer(options.core, { ...AUTHORIZATION_OFF, ...options.authorization }, options.log),
      quotas: new QuotaManager(options.core, { ...DEFAULT_QUOTA_SETTINGS, ...options.quotas }, options.log),
    };
  }

  /**
   * Starts a PLAINTEXT listener whose connections answer with the settings'
   * advertised address as it is when they ask (the caller fills it in once
   * bound); resolves to the bound address (port 0 picks a free one).
   */
  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    const listener: ListenerRuntime = { name: 'PLAINTEXT', settings: this.options.settings, sasl: null };
    const bound = await this.bind(createServer((socket) => this.accept(socket, listener, null)), host, port);
    return bound;
  }

  /** Starts one listener of any security protocol; Metadata on it answers its advertised address (default the bound one). */
  async listenOn(spec: ListenerSpec): Promise<BoundListener> {
    const settings: GatewaySettings = { ...this.options.settings, advertised: { ...this.options.settings.advertised } };
    let sasl: SaslSettings | null = null;
    if (usesSasl(spec.name)) {
      if (!this.options.sasl || this.options.sasl.mechanisms.size === 0) throw new Error(`The ${spec.name} listener needs SASL mechanisms to offer; enable at least one.`);
      sasl = this.options.sasl;
    }
    const listener: ListenerRuntime = { name: spec.name, settings, sasl };
    this.listenerSettings.push(settings);
    let server: Server;
    let stopReloads: (() => void) | undefined;
    if (usesTls(spec.name)) {
      const tls = this.options.tls;
      if (!tls) throw new Error(`The ${spec.name} listener needs a TLS certificate and key (--tls-cert-file, --tls-key-file).`);
      const tlsServer: TlsServer = createTlsServer({ ...tls.serverOptions(), handshakeTimeout: this.tlsHandshakeTimeoutMs() });
      tlsServer.on('secureConnection', (socket: TLSSocket) => this.acceptTls(socket, listener));
      tlsServer.on('tlsClientError', (e, socket) => {
        this.runtime.log.warn({ remote: `${socket.remoteAddress}:${socket.remotePort}`, listener: spec.name, err: e.message }, 'TLS handshake failed');
      });
      stopReloads = tls.onReload((options) => tlsServer.setSecureContext(options));
      server = tlsServer;
    } else {
      server = createServer((socket) => this.accept(socket, listener, null));
    }
    const bound = await this.bind(server, spec.host, spec.port, stopReloads);
    settings.advertised.host = spec.advertisedHost ?? bound.host;
    settings.advertised.port = spec.advertisedPort ?? bound.port;
    return { name: spec.name, host: bound.host, port: bound.port, advertised: { host: settings.advertised.host, port: settings.advertised.port } };
  }

  /**
   * Makes this gateway a member of a cluster once its listeners are bound:
   * its node id (derived from its bound address when none was set), the
   * cluster id all members report and the view of the live gateways
   * Metadata lists.
   */
  joinCluster(nodeId: number, clusterId: string, cluster: ClusterView): void {
    for (const settings of [this.options.settings, ...this.listenerSettings]) {
      settings.advertised.nodeId = nodeId;
      settings.clusterId = clusterId;
      settings.cluster = cluster;
    }
    const held = this.held ?? [];
    this.held = null;
    for (const { socket, listener, principal } of held) {
      socket.removeListener('error', dropHeld);
      if (!socket.destroyed) this.accept(socket, listener, principal);
    }
  }

  /**
   * For a gateway that will join a cluster: connections accepted before
   * joinCluster wait, unread, until it has joined. Answered earlier, a
   * Metadata request would list this gateway alone, and a client that asked
   * (one reconnecting to a restarted gateway) would drop its handles to every
   * other gateway, failing the requests in flight on them ("Broker handle
   * destroyed"). A client only waits a moment longer for its first answer.
   */
  holdConnectionsUntilJoined(): void {
    this.held ??= [];
  }

  private tlsHandshakeTimeoutMs(): number {
    // 0 would mean "no deadline" here but node's TLS default (120 s) otherwise.
    return this.runtime.limits.authenticationTimeoutMs > 0 ? this.runtime.limits.authenticationTimeoutMs : 120_000;
  }

  private accessStarted: Promise<void> | null = null;

  private async bind(server: Server, host: string, port: number, stopReloads?: () => void): Promise<{ host: string; port: number }> {
    // ACLs and quotas in force before the first client is served.
    await (this.accessStarted ??= Promise.all([this.runtime.authorizer.start(), this.runtime.quotas.start()]).then(() => {}));
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => {
        stopReloads?.();
        reject(e);
      };
      server.once('error', onError);
      server.listen({ host, port }, () => {
        server.off('error', onError);
        this.servers.push({ server, stopReloads });
        const address = server.address() as AddressInfo;
        resolve({ host: address.address, port: address.port });
      });
    });
  }

  private acceptTls(socket: TLSSocket, listener: ListenerRuntime): void {
    let principal: string | null;
    try {
      principal = certificatePrincipal(socket);
    } catch (e) {
      this.runtime.log.warn({ remote: `${socket.remoteAddress}:${socket.remotePort}`, listener: listener.name }, `authentication failed: ${(e as Error).message}`);
      socket.destroy();
      return;
    }
    this.accept(socket, listener, principal);
  }

  /** The ACL checks this gateway makes, for the HTTP API in the same process to make the same. */
  get authorizer(): Authorizer {
    return this.runtime.authorizer;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Request bytes held across connections right now (frames being read, requests being handled). */
  get bufferedRequestBytes(): number {
    return this.runtime.budget.heldBytes;
  }

  /** Whether every listener accepts connections now: false before they are bound and once closing. */
  get accepting(): boolean {
    return this.closing === null && this.servers.length > 0 && this.servers.every(({ server }) => server.listening);
  }

  /** Stops accepting, lets in-flight requests answer for up to `graceMs`, then closes every connection. */
  close(graceMs = 5_000): Promise<void> {
    this.closing ??= this.shutDown(graceMs);
    return this.closing;
  }

  private async shutDown(graceMs: number): Promise<void> {
    for (const { socket } of this.held ?? []) socket.destroy();
    this.held = null;
    this.stopCounting();
    this.runtime.authorizer.stop();
    this.runtime.quotas.stop();
    const stopped = Promise.all(
      this.servers.map(
        ({ server, stopReloads }) =>
          new Promise<void>((resolve) => {
            stopReloads?.();
            server.close(() => resolve());
          }),
      ),
    );
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

  private accept(socket: Socket, listener: ListenerRuntime, transportPrincipal: string | null): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (this.held) {
      // A client that gives up while held must not take the process down with an unhandled error.
      socket.on('error', dropHeld);
      this.held.push({ socket, listener, principal: transportPrincipal });
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
    let counted = this.listenerMetrics.get(listener.name);
    if (!counted) this.listenerMetrics.set(listener.name, (counted = listenerMetrics(listener.name)));
    counted.created.value++;
    const connection = new Connection(socket, this.nextConnectionId++, this.runtime, listener, transportPrincipal, (c) => {
      counted.closed.value++;
      this.connections.delete(c);
      if (--fromIp.open === 0) this.perIp.delete(ip);
      else fromIp.refusalLogged = false;
      if (this.connections.size === 0) this.onLastConnection?.();
    });
    this.connections.add(connection);
  }
}

/** The error handler of a held connection (GatewayServer.holdConnectionsUntilJoined): the client went away. */
function dropHeld(this: Socket): void {
  this.destroy();
}
