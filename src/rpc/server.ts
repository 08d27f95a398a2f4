/**
 * The RPC server: exposes one Core to gateways over TCP or a Unix
 * socket. Each connection authenticates (./handshake.ts), then sends calls
 * that run concurrently and are answered as they finish, in any order. A
 * call's deadline and a Cancel frame abort its core call through the
 * AbortSignal the core's long-polls take; a connection that goes away aborts
 * everything it had in flight. CoreErrors go back with their code and message.
 *
 * Authentication is the shared secret (SPAKE2), mutual TLS, or both: with
 * TLS every connection is a TLS session that must present a client
 * certificate chaining to the configured CA (else it is refused with a
 * sentence and logged), and the core's certificate is checked by the
 * gateway; with a secret too, the SPAKE2 exchange runs inside the session.
 * The handshake deadline and the cap on unauthenticated connections count
 * from the TCP accept, so they cover the TLS handshake as well.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { isCoreError } from '../core/errors.js';
import type { Core } from '../core/core.js';
import type { TlsCredentials } from '../tls/credentials.js';
import { type RpcAddress } from './address.js';
import { DEFAULT_MAX_FRAME_BYTES, FrameKind, frameWriter, RefusedReason, rpcFrameSplitter, sendFrame } from './frames.js';
import { confirmationMatches, HELLO_MAGIC, PAKE_VALUE_BYTES, pakeSecret, RPC_VERSION, startExchange, versionProblem } from './handshake.js';
import type { PakeSecret } from './pake.js';
import { METHOD_NAMES, type MethodName } from './methods.js';
import { ValueReader } from './values.js';
import { failureCode, rpcServerMetrics } from '../metrics/rpc.js';

export interface RpcFaults {
  /**
   * Runs after the core has answered a call and before the answer is sent;
   * returning 'drop-connection' destroys the connection instead, so the caller
   * never learns the outcome (for exactly-once tests).
   */
  beforeReply?(call: { method: MethodName; request: unknown }): 'drop-connection' | void;
}

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

type Stage = 'hello' | 'auth' | 'ready' | 'refused';

/** A connection let in under the cap, until it authenticates or goes. */
interface Admission {
  peer: string;
  /** Still counted against the cap (not yet authenticated). */
  readonly pending: boolean;
  /** Stops counting it and stops its deadline; idempotent. */
  settle(): void;
}

/** A TCP connection's identity, the same on the raw socket and the TLS session over it. */
function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}

export class RpcServer {
  private readonly server: Server;
  private readonly connections = new Set<Socket>();
  private readonly secret: PakeSecret | null;
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
    this.secret = options.secret === undefined ? null : pakeSecret(options.secret);
    const tls = options.tls;
    if (!tls) {
      this.server = createServer((raw) => {
        const admission = this.admit(raw);
        if (admission) this.serve(raw, admission);
      });
      return;
    }
    // Node checks a client certificate against the CA (and says so in `authorized`) only for a tls.Server's
    // sockets. It does not refuse: the check is ours (serve), so a gateway without a good certificate hears why instead of a reset.
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
        admission.settle();
      });
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      const key = connectionKey(socket);
      const admission = this.tlsHandshakes.get(key);
      this.tlsHandshakes.delete(key);
      if (!admission) return void socket.destroy();
      this.serve(socket, admission, socket);
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
    return {
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
  }

  /** Runs the queen RPC handshake, then calls, on an admitted connection (a TLS session over it when `tls`). */
  private serve(socket: Socket, admission: Admission, tls?: TLSSocket): void {
    const { core, log, faults } = this.options;
    const { peer } = admission;
    const authenticatedOrGone = () => admission.settle();
    this.connections.add(socket);
    socket.setNoDelay(true);
    const inFlight = new Map<number, AbortController>();
    let stage: Stage = 'hello';
    /** The verified client certificate's subject, for the log. */
    let certificateSubject: string | undefined;
    let expectedConfirmation: Buffer = Buffer.alloc(0);

    const refuse = (code: number, reason: string) => {
      log?.warn({ peer, reason }, 'rpc connection refused');
      const w = frameWriter(FrameKind.Refused);
      w.uint8(code);
      w.raw(Buffer.from(reason, 'utf8'));
      sendFrame(socket, w);
      socket.end();
      stage = 'refused';
    };
    const drop = (reason: string) => {
      log?.warn({ peer, reason }, 'rpc connection closed');
      socket.destroy();
    };

    const onHello = (body: Buffer) => {
      const r = new ValueReader(body);
      if (body.length < 4 + 2 + 8 || !r.bytes(4).equals(HELLO_MAGIC)) return drop('the first frame is not a queen RPC hello');
      const problem = versionProblem(r.uint16(), r.bytes(8));
      if (problem) return refuse(RefusedReason.Version, problem);
      if (this.secret === null) {
        if (r.remaining !== 0) {
          return refuse(RefusedReason.Authentication, 'Authentication failed: this core takes no RPC secret (gateways prove themselves by TLS client certificate); drop --rpc-secret on the gateway, or give the core the same one.');
        }
        return ready();
      }
      if (r.remaining === 0) {
        return refuse(RefusedReason.Authentication, "Authentication failed: this core requires the shared RPC secret; give the gateway the core's --rpc-secret (QUEEN_RPC_SECRET).");
      }
      if (r.remaining !== PAKE_VALUE_BYTES) return drop('the hello carries no key-exchange value');
      const exchange = startExchange('server', this.secret);
      let keys;
      try {
        keys = exchange.finish(Buffer.from(r.bytes(PAKE_VALUE_BYTES)));
      } catch (e) {
        return drop(`rpc authentication failed: ${(e as Error).message}`);
      }
      expectedConfirmation = keys.peerConfirmation;
      const w = frameWriter(FrameKind.Challenge);
      w.uint16(RPC_VERSION);
      w.raw(exchange.message);
      w.raw(keys.ownConfirmation);
      sendFrame(socket, w);
      stage = 'auth';
    };

    const onAuth = (body: Buffer) => {
      if (!confirmationMatches(expectedConfirmation, body)) {
        return refuse(RefusedReason.Authentication, "Authentication failed: the gateway's RPC secret is not this core's; give both the same --rpc-secret (QUEEN_RPC_SECRET).");
      }
      ready();
    };

    const ready = () => {
      sendFrame(socket, frameWriter(FrameKind.Ready));
      stage = 'ready';
      authenticatedOrGone();
      frames.maxFrameBytes = this.options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
      log?.debug({ peer, certificate: certificateSubject }, 'rpc connection ready');
    };

    const answer = (kind: typeof FrameKind.Reply | typeof FrameKind.Failure, id: number, value: unknown) => {
      if (socket.destroyed) return;
      const w = frameWriter(kind);
      w.uint32(id);
      w.value(value);
      sendFrame(socket, w);
    };

    const onCall = (body: Buffer) => {
      const r = new ValueReader(body);
      const id = r.uint32();
      const method = METHOD_NAMES[r.uint16()];
      const deadlineMs = r.uint32();
      const request = r.value();
      if (method === undefined) return answer(FrameKind.Failure, id, { code: 'protocol', message: 'The core has no such method.', core: false });
      const controller = new AbortController();
      inFlight.set(id, controller);
      const timer = deadlineMs > 0 ? setTimeout(() => controller.abort(), deadlineMs) : null;
      const call = (core[method] as (req: unknown, options: { signal: AbortSignal }) => Promise<unknown>).bind(core);
      const arrived = performance.now();
      const served = (failure: string | null) => rpcServerMetrics(method).done((performance.now() - arrived) / 1000, failure);
      Promise.resolve()
        .then(() => call(request, { signal: controller.signal }))
        .then(
          (result) => {
            served(null);
            if (faults?.beforeReply?.({ method, request }) === 'drop-connection') return void socket.destroy();
            answer(FrameKind.Reply, id, result);
          },
          (e: unknown) => {
            served(failureCode(e));
            if (isCoreError(e)) return answer(FrameKind.Failure, id, { code: e.code, message: e.message, core: true });
            log?.error({ err: e, method }, 'core call failed');
            answer(FrameKind.Failure, id, { code: 'remote_failure', message: `The core failed on ${method}: ${(e as Error)?.message ?? String(e)}`, core: false });
          },
        )
        .catch((e: unknown) => drop(`an answer could not be encoded: ${(e as Error).message}`))
        .finally(() => {
          if (timer) clearTimeout(timer);
          inFlight.delete(id);
        });
    };

    const frames = rpcFrameSplitter((kind, body) => {
      if (socket.destroyed || stage === 'refused') return;
      if (stage === 'hello' && kind === FrameKind.Hello) onHello(body);
      else if (stage === 'auth' && kind === FrameKind.Auth) onAuth(body);
      else if (stage === 'ready' && kind === FrameKind.Call) onCall(body);
      else if (stage === 'ready' && kind === FrameKind.Cancel) inFlight.get(new ValueReader(body).uint32())?.abort();
      else drop(`unexpected frame kind ${kind} during ${stage}`);
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        frames.push(chunk);
      } catch (e) {
        drop((e as Error).message);
      }
    });
    if (tls) {
      const certificate = tls.getPeerX509Certificate();
      if (certificate && tls.authorized) certificateSubject = certificate.subject.replace(/\n/g, ', ');
      else {
        const why = certificate
          ? `its client certificate (${certificate.subject.replace(/\n/g, ', ')}) does not verify against this core's CA: ${String(tls.authorizationError)}`
          : 'it presented no client certificate';
        refuse(RefusedReason.Authentication, `Authentication failed: this core takes gateways with a client certificate signed by its CA (--rpc-tls-ca-file), and ${why}; give the gateway --rpc-tls-cert-file and --rpc-tls-key-file with one.`);
      }
    }
    socket.on('error', () => {});
    socket.on('close', () => {
      // A peer that got the challenge and left without proving the secret spent its one guess (or found the core is not who it expected): an attempt worth a line.
      if (stage === 'auth' && admission.pending) log?.warn({ peer }, 'rpc authentication failed: the peer closed the connection after the challenge without proving the secret');
      authenticatedOrGone();
      this.connections.delete(socket);
      for (const controller of inFlight.values()) controller.abort();
      inFlight.clear();
    });
  }
}
