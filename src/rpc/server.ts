/**
 * The RPC server: exposes one Core to gateways over TCP or a Unix
 * socket. Each connection authenticates, then sends calls that run
 * concurrently and are answered as they finish, in any order. A call's
 * deadline and a Cancel frame abort its core call through the AbortSignal
 * the core's long-polls take; a connection that goes away aborts everything
 * it had in flight. CoreErrors go back with their code and message.
 *
 * Authentication is TLS, one of three ways:
 * - the shared secret: TLS with a pre-shared key derived from it (./psk.ts);
 * - mutual TLS: every connection is a TLS session that must present a client
 *   certificate chaining to the configured CA (else it is refused with a
 *   sentence and logged), and the core's certificate is checked by the gateway;
 * - both: the TLS-PSK session runs inside the certificate's session.
 * The core reads a connection's first bytes (inside the certificate's
 * session, when there is one): a TLS record means the gateway is proving the
 * secret; a queen frame means it has none to give, which a core that holds
 * one refuses with a sentence. The hello (./handshake.ts) is answered only
 * inside the innermost session. The handshake deadline and the cap on
 * unauthenticated connections count from the TCP accept, so they cover the
 * TLS handshakes as well.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { Core } from '../core/core.js';
import type { TlsCredentials } from '../tls/credentials.js';
import { type RpcAddress } from './address.js';
import { RefusedReason } from './frames.js';
import { isSecretMismatch, preSharedKey, pskServerSocket, startsTls } from './psk.js';
import { refuseConnection, ServedConnection, type Admission, type RpcFaults } from './served-connection.js';

export type { RpcFaults } from './served-connection.js';

export interface RpcServerOptions {
  core: Core;
  /** The shared secret every gateway must prove it knows; optional with `tls`. */
  secret?: string;
  /** Mutual TLS: the core's certificate and key, and the CA gateways' client certificates must chain to (required). */
  tls?: TlsCredentials;
  log?: Logger;
  maxFrameBytes?: number;
  faults?: RpcFaults;
  /** A connection must finish the handshake within this long. Default 5000 ms. */
  handshakeTimeoutMs?: number;
  /** Connections still in their handshake at once; more are closed at once (logged once per episode). Default 64. */
  maxUnauthenticated?: number;
}

const DEFAULT_HANDSHAKE_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_UNAUTHENTICATED = 64;


/** A TCP connection's identity, the same on the raw socket and the TLS session over it. */
function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}

const NO_SECRET_HERE = 'Authentication failed: this core takes no RPC secret (gateways prove themselves by TLS client certificate); drop --rpc-secret on the gateway, or give the core the same one.';

/** Why a mutual-TLS session's client certificate is not accepted, as the sentence the gateway gets; null when it is. */
function certificateRefusal(tls: TLSSocket): string | null {
  const certificate = tls.getPeerX509Certificate();
  if (certificate && tls.authorized) return null;
  const why = certificate
    ? `its client certificate (${certificate.subject.replace(/\n/g, ', ')}) does not verify against this core's CA: ${String(tls.authorizationError)}`
    : 'it presented no client certificate';
  return `Authentication failed: this core takes gateways with a client certificate signed by its CA (--rpc-tls-ca-file), and ${why}; give the gateway --rpc-tls-cert-file and --rpc-tls-key-file with one.`;
}

export class RpcServer {
  private readonly server: Server;
  /** Every accepted TCP connection (each TLS session lives on one). */
  private readonly connections = new Set<Socket>();
  /** The TLS-PSK key derived from the secret; null without one. */
  private readonly key: Buffer | null;
  /** Connections that have not finished the handshake. */
  private unauthenticated = 0;
  private capLogged = false;
  private stopReloads: (() => void) | null = null;
  /** TLS connections admitted and still in their TLS handshake, by connectionKey. */
  private readonly tlsHandshakes = new Map<string, Admission>();

  constructor(private readonly options: RpcServerOptions) {
    if (options.secret === undefined && options.tls === undefined) {
      throw new Error('The RPC server needs a way to authenticate gateways: give it the shared secret, TLS credentials with a CA for client certificates, or both.');
    }
    if (options.tls && options.tls.files.caFile === undefined) {
      throw new Error('TLS on the RPC authenticates gateways by their client certificates: give the CA file they must chain to.');
    }
    this.key = options.secret === undefined ? null : preSharedKey(options.secret);
    const tls = options.tls;
    if (!tls) {
      this.server = createServer((raw) => {
        const admission = this.admit(raw);
        if (admission) this.negotiate(raw, admission);
      });
      return;
    }
    // Node checks a client certificate against the CA (and says so in `authorized`) only for a tls.Server's
    // sockets. It does not refuse: the check is ours, so a gateway without a good certificate hears why instead of a reset.
    const server = createTlsServer({ ...tls.serverOptions(), requestCert: true, rejectUnauthorized: false });
    this.stopReloads = tls.onReload((context) => server.setSecureContext(context));
    // The cap and the deadline count from the TCP accept, before the TLS handshake.
    server.prependListener('connection', (raw: Socket) => {
      const admission = this.admit(raw);
      if (!admission) return;
      const key = connectionKey(raw);
      this.tlsHandshakes.set(key, admission);
      raw.once('close', () => {
        if (this.tlsHandshakes.get(key) === admission) this.tlsHandshakes.delete(key);
      });
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      const key = connectionKey(socket);
      const admission = this.tlsHandshakes.get(key);
      this.tlsHandshakes.delete(key);
      if (!admission) return void socket.destroy();
      socket.on('error', () => {});
      const refusal = certificateRefusal(socket);
      if (refusal !== null) return this.refuse(socket, admission, RefusedReason.Authentication, refusal);
      admission.certificateSubject = socket.getPeerX509Certificate()!.subject.replace(/\n/g, ', ');
      this.negotiate(socket, admission);
    });
    server.on('tlsClientError', (e: Error, socket: TLSSocket) => {
      const admission = this.tlsHandshakes.get(connectionKey(socket));
      if (admission) options.log?.warn({ peer: admission.peer, reason: e.message }, 'rpc connection closed: the TLS handshake failed (is the gateway using TLS on the RPC, with a certificate this core trusts?)');
    });
    this.server = server;
  }

  /** Starts listening; resolves with the bound address (the real port when 0 was asked for). */
  listen(address: RpcAddress): Promise<RpcAddress> {
    if (this.options.tls && 'path' in address) {
      return Promise.reject(new Error('TLS on the RPC takes a TCP address, not a Unix socket (whose file permissions decide who may connect): listen on HOST:PORT, or drop TLS.'));
    }
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      const done = () => {
        this.server.off('error', reject);
        const bound = this.server.address();
        resolve(typeof bound === 'object' && bound !== null ? { host: bound.address, port: bound.port } : { path: String(bound) });
      };
      if ('path' in address) this.server.listen(address.path, done);
      else this.server.listen(address.port, address.host, done);
    });
  }

  /** Stops accepting, aborts calls in flight and closes every connection. */
  close(): Promise<void> {
    this.stopReloads?.();
    this.stopReloads = null;
    for (const socket of this.connections) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Lets a new connection in under the cap on unauthenticated ones, with the handshake deadline; null when it was closed at once. */
  private admit(raw: Socket): Admission | null {
    const { log } = this.options;
    const peer = `${raw.remoteAddress ?? 'unix'}:${raw.remotePort ?? ''}`;
    const cap = this.options.maxUnauthenticated ?? DEFAULT_MAX_UNAUTHENTICATED;
    if (this.unauthenticated >= cap) {
      if (!this.capLogged) log?.warn({ peer, maxUnauthenticated: cap }, 'rpc connections refused: too many are still in their handshake (logged once until one finishes)');
      this.capLogged = true;
      raw.destroy();
      return null;
    }
    this.unauthenticated++;
    let pending = true;
    const handshakeTimeoutMs = this.options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    const deadline = setTimeout(() => {
      log?.warn({ peer, handshakeTimeoutMs }, 'rpc authentication failed: the handshake did not finish in time');
      raw.destroy();
    }, handshakeTimeoutMs);
    const admission: Admission = {
      peer,
      get pending() {
        return pending;
      },
      settle: () => {
        if (!pending) return;
        pending = false;
        this.unauthenticated--;
        this.capLogged = false;
        clearTimeout(deadline);
      },
    };
    this.connections.add(raw);
    raw.setNoDelay(true); // on the TCP socket itself: a TLS session over it cannot pass the setting down
    raw.on('error', () => {}); // a reset before the first byte; 'close' follows
    raw.once('close', () => {
      this.connections.delete(raw);
      admission.settle();
    });
    return admission;
  }

  /**
   * Reads a connection's first bytes on `base` (the TCP socket, or the
   * certificate's TLS session): TLS-PSK when the gateway proves the secret,
   * queen frames straight away when it has none to give.
   */
  private negotiate(base: Socket, admission: Admission): void {
    base.once('readable', () => {
      const first = base.read() as Buffer | null;
      if (first === null) return; // the peer left without a word; 'close' settles it
      base.unshift(first);
      if (!startsTls(first)) return this.serve(base, admission, false);
      if (this.key === null) return this.refuse(base, admission, RefusedReason.Authentication, NO_SECRET_HERE);
      const secured = pskServerSocket(base, this.key);
      let established = false;
      secured.once('secure', () => {
        established = true;
        this.serve(secured, admission, true);
      });
      secured.on('error', (e: Error) => {
        if (established) return; // a lost connection; 'close' cleans up
        const { log } = this.options;
        const who = { peer: admission.peer, certificate: admission.certificateSubject, reason: e.message };
        if (isSecretMismatch(e)) log?.warn(who, "rpc authentication failed: the gateway's RPC secret is not this core's (its TLS-PSK handshake did not verify)");
        else log?.warn(who, "rpc connection closed: the TLS-PSK handshake failed (is the gateway giving this core's --rpc-secret?)");
        base.destroy();
      });
      secured.once('close', () => base.destroy());
      base.once('close', () => secured.destroy());
    });
  }

  private refuse(socket: Socket, admission: Admission, code: number, reason: string): void {
    refuseConnection(socket, admission, code, reason, this.options.log);
  }

  /** Runs the hello, then calls, on the innermost layer of an admitted connection; `secretProven` when it came through TLS-PSK. */
  private serve(socket: Socket, admission: Admission, secretProven: boolean): void {
    const { core, log, faults, maxFrameBytes } = this.options;
    new ServedConnection(socket, admission, { core, log, faults, maxFrameBytes, secretRequired: this.key !== null && !secretProven, secretProven });
  }
}
