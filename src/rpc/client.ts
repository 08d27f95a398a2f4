/**
 * The RPC client: a Core whose calls travel to a core in another
 * process. Calls are pipelined over one connection and matched to their
 * answers by id, so a slow call never holds up a quick one.
 *
 * - Deadline: every call gets the client's call timeout, plus the time a
 *   long-poll may legitimately be held (./methods.ts); JoinGroup and SyncGroup
 *   have none of their own. The server is told the deadline too and aborts
 *   the core call when it passes.
 * - Cancellation: a caller's AbortSignal sends a Cancel frame; the server
 *   aborts the core call, whose answer (an empty long-poll) comes back as usual.
 * - Reconnect: a lost connection is dialled again with exponential backoff.
 *   Calls that change nothing, and calls keyed for the core's ledger, are
 *   sent again on the new connection; any other unanswered call fails with
 *   `connection_lost`, because its outcome is unknown and repeating it could
 *   apply it twice. The keys are minted here (./methods.ts, `keyed`): an
 *   append from a producer without a producer id gets a requestId, which the
 *   core's append ledger answers a repeat from (durably, on PostgreSQL, so a
 *   repeat after the core restarted is answered too). Callers never know
 *   whether their core is across the RPC.
 * - Errors: a CoreError thrown by the core is rethrown here as a CoreError
 *   with the same code and message; failures of the hop are RpcErrors.
 * - Authentication: the shared secret as TLS-PSK (./psk.ts), mutual TLS, or
 *   both, TLS-PSK inside the certificate's session (./server.ts). With
 *   certificates the core's must chain to the CA and name the host dialled;
 *   each dial uses the certificate files as they are then, so a renewed
 *   client certificate is used from the next connection on. A core that does
 *   not hold the same secret fails the TLS-PSK handshake, and this side
 *   sends it nothing (so an impostor never gets a call).
 */
import { isIP, connect, type Socket } from 'node:net';
import { connect as tlsConnect, createSecureContext, type SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { CallOptions } from '../core/core.js';
import { CoreError, type CoreErrorCode } from '../core/errors.js';
import type { Core } from '../core/core.js';
import { formatRpcAddress, parseRpcAddress, type RpcAddress } from './address.js';
import { RpcError, type RpcErrorCode } from './errors.js';
import { DEFAULT_MAX_FRAME_BYTES, FrameKind, frameWriter, RefusedReason, rpcFrameSplitter, sendFrame, writeFrame } from './frames.js';
import { sendHello } from './handshake.js';
import { isSecretMismatch, preSharedKey, securedConnection } from './psk.js';
import { METHOD_NAMES, type MethodName } from './methods.js';
import { MAX_CALL_ID, outgoingCall, type OutgoingCall, type PendingCall } from './outgoing-call.js';
import { ValueReader } from './values.js';
import type { TlsCredentials } from '../tls/credentials.js';
import { failureCode, rpcClientMetrics } from '../metrics/rpc.js';

export interface RpcClientOptions {
  /** The core's address: `{ host, port }`, `{ path }`, or text ("core:7070", "/run/queen/core.sock"). */
  address: RpcAddress | string;
  /** The shared secret; the core must hold the same. Optional with `tls`. */
  secret?: string;
  /** Mutual TLS: this gateway's client certificate and key, and the CA the core's certificate must chain to. */
  tls?: TlsCredentials;
  /** How long a call may take, beyond any long-poll wait it asks for. Default 30 s. */
  callTimeoutMs?: number;
  /** How long `connectCore` waits for the first connection. Default 10 s. */
  connectTimeoutMs?: number;
  /** Reconnect backoff: first delay and ceiling. Default 50 ms doubling to 2 s. */
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** How long close() lets answers to cancelled long-polls arrive. Default 2 s. */
  closeGraceMs?: number;
  maxFrameBytes?: number;
  log?: Logger;
}

/** A core reached over the RPC. close() releases the connection; the core itself keeps running. */
export interface RpcCore extends Core {
  /** The core's address, as text. */
  readonly address: string;
  /** Whether the connection to the core is up and authenticated now (calls made while it is not wait for it or fail). */
  reachable(): boolean;
}

type Stage = 'ready-wait' | 'ready';

class RpcClient {
  private readonly address: RpcAddress;
  readonly addressText: string;
  private readonly calls = new Map<number, PendingCall>();
  private nextId = 1;
  private socket: Socket | null = null;
  private ready = false;
  private closed = false;
  /** A refusal no retry can fix (versions, secrets); calls fail with it until a handshake succeeds. */
  private fatal: RpcError | null = null;
  private lastProblem = 'not connected yet';
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly stateWaiters = new Set<() => void>();

  /** The TLS-PSK key derived from the secret; null without one. */
  private readonly key: Buffer | null;
  /** The TLS context dials use; replaced when the certificate files change. */
  private secureContext: SecureContext | null = null;
  private stopReloads: (() => void) | null = null;

  constructor(private readonly options: RpcClientOptions) {
    if (options.secret === undefined && options.tls === undefined) {
      throw new Error('The RPC client needs a way to authenticate to the core: give it the shared secret, TLS credentials, or both.');
    }
    if (options.tls && options.tls.files.caFile === undefined) {
      throw new Error("TLS on the RPC checks the core's certificate: give the CA file it must chain to.");
    }
    this.address = typeof options.address === 'string' ? parseRpcAddress(options.address) : options.address;
    this.addressText = formatRpcAddress(this.address);
    this.backoffMs = options.reconnectInitialMs ?? 50;
    this.key = options.secret === undefined ? null : preSharedKey(options.secret);
    if (options.tls) {
      this.secureContext = createSecureContext(options.tls.contextOptions());
      this.stopReloads = options.tls.onReload((context) => (this.secureContext = createSecureContext(context)));
    }
  }

  /** Resolves once connected and authenticated; rejects on a refusal or when the time is up. */
  async start(): Promise<void> {
    this.dial();
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    while (!this.ready) {
      if (this.fatal) throw this.fatal;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new RpcError('unavailable', `Could not reach the core at ${this.addressText} within ${timeoutMs} ms (${this.lastProblem}); check the core address and that the core is running.`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.stateWaiters.add(done);
      });
    }
  }

  call(method: MethodName, given: unknown, options?: CallOptions): Promise<unknown> {
    if (this.closed) return Promise.reject(new CoreError('closed', `This connection to the core at ${this.addressText} is closed; connect again to make calls.`));
    if (this.fatal) return Promise.reject(this.fatal);
    const id = this.nextId;
    this.nextId = this.nextId >= MAX_CALL_ID ? 1 : this.nextId + 1;
    let outgoing: OutgoingCall;
    try {
      outgoing = outgoingCall(id, method, given, this.options.callTimeoutMs ?? 30_000);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => this.track(id, method, outgoing, options?.signal, { resolve, reject }));
  }

  /** Holds the call until it is answered, its deadline passes or its caller aborts; sends it now when connected. */
  private track(id: number, method: MethodName, outgoing: OutgoingCall, signal: AbortSignal | undefined, settle: Pick<PendingCall, 'resolve' | 'reject'>): void {
    const { frame, deadlineMs } = outgoing;
    let timer: NodeJS.Timeout | null = null;
    const onAbort = () => {
      const call = this.calls.get(id);
      if (!call) return;
      if (call.sentOn && call.sentOn === this.socket && this.ready) this.sendCancel(id);
      else this.settle(id, new RpcError('cancelled', `The ${method} call was cancelled before it reached the core.`));
    };
    const call: PendingCall = {
      method,
      frame,
      retrySafe: outgoing.retrySafe,
      longPoll: outgoing.longPoll,
      sentOn: null,
      madeAt: performance.now(),
      resolve: settle.resolve,
      reject: settle.reject,
      cleanup: () => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      },
    };
    this.calls.set(id, call);
    if (deadlineMs > 0) timer = setTimeout(() => this.deadlinePassed(id, call, deadlineMs), deadlineMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (this.ready && this.socket) {
      call.sentOn = this.socket;
      writeFrame(this.socket, frame);
    }
    if (signal?.aborted) onAbort();
  }

  private deadlinePassed(id: number, call: PendingCall, deadlineMs: number): void {
    const sent = call.sentOn !== null;
    if (sent && call.sentOn === this.socket) this.sendCancel(id);
    this.settle(
      id,
      sent
        ? new RpcError('deadline_exceeded', `The core at ${this.addressText} did not answer ${call.method} within ${deadlineMs} ms; the call may or may not have taken effect.`)
        : new RpcError('unavailable', `No connection to the core at ${this.addressText} within ${deadlineMs} ms (${this.lastProblem}); ${call.method} was not sent.`),
    );
  }

  /** Cancels pending long-polls (their empty answers still arrive), waits briefly for answers, then lets go. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopReloads?.();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    for (const [id, call] of this.calls) {
      if (call.sentOn === null) this.settle(id, new CoreError('closed', `The connection to the core at ${this.addressText} was closed before ${call.method} was sent.`));
      else if (call.longPoll && this.ready) this.sendCancel(id);
    }
    const until = Date.now() + (this.options.closeGraceMs ?? 2_000);
    while (this.calls.size > 0 && Date.now() < until && this.socket) await new Promise((r) => setTimeout(r, 5));
    for (const [id, call] of this.calls) this.settle(id, new CoreError('closed', `The connection to the core at ${this.addressText} was closed before ${call.method} was answered.`));
    this.socket?.destroy();
    this.socket = null;
    this.notify();
  }

  // ─── The connection ───────────────────────────────────────────────────────

  /** A new connection to the core: TLS when configured (the core's certificate checked against the CA and the host dialled). */
  private open(): Socket {
    const context = this.secureContext;
    if (context === null) return 'path' in this.address ? connect(this.address.path) : connect(this.address.port, this.address.host);
    const where = 'path' in this.address ? { path: this.address.path } : { host: this.address.host, port: this.address.port, ...(isIP(this.address.host) ? {} : { servername: this.address.host }) };
    return tlsConnect({ ...where, secureContext: context });
  }

  private dial(): void {
    this.reconnectTimer = null;
    if (this.closed) return;
    const base = this.open();
    this.socket = base;
    base.setNoDelay(true);
    base.on('error', (e: NodeJS.ErrnoException) => {
      this.lastProblem = `${e.code ?? 'error'}: ${e.message}`;
    });
    base.on('close', () => this.onClose(base));
    base.once(this.secureContext ? 'secureConnect' : 'connect', () => {
      if (this.key === null) return this.speak(base);
      const secured = securedConnection(base, this.key, {
        established: () => this.speak(secured),
        refused: (body) => this.fail(secured, this.refusal(body)),
        failed: (e) => {
          if (isSecretMismatch(e)) return this.fail(secured, new RpcError('unauthenticated', `The core at ${this.addressText} holds a different RPC secret than this gateway; give both the same --rpc-secret (QUEEN_RPC_SECRET).`));
          this.lastProblem = `the TLS-PSK handshake with the core failed (${e.message}); does the core take --rpc-secret?`;
        },
      });
      this.socket = secured;
      secured.once('close', () => {
        base.destroy();
        this.onClose(secured);
      });
      base.once('close', () => secured.destroy());
    });
  }

  /** A refusal no retry can fix: calls fail with it until a handshake succeeds. */
  private fail(socket: Socket, error: RpcError): void {
    this.fatal = error;
    this.lastProblem = error.message;
    this.options.log?.error({ core: this.addressText, reason: error.message }, 'rpc connection refused');
    socket.destroy();
  }

  private refusal(body: Buffer): RpcError {
    const reason = body[0];
    const code: RpcErrorCode = reason === RefusedReason.Authentication ? 'unauthenticated' : reason === RefusedReason.Version ? 'version_mismatch' : 'protocol';
    return new RpcError(code, `The core at ${this.addressText} refused this gateway: ${body.subarray(1).toString('utf8')}`);
  }

  /** The queen RPC over the innermost layer: the hello, then Ready or Refused, then answers. */
  private speak(socket: Socket): void {
    let stage: Stage = 'ready-wait';
    sendHello(socket);

    const frames = rpcFrameSplitter((kind, body) => {
      if (socket.destroyed) return;
      if (kind === FrameKind.Reply || kind === FrameKind.Failure) {
        if (stage !== 'ready') throw new Error(`an answer arrived before the handshake finished`);
        this.onAnswer(kind, body);
      } else if (kind === FrameKind.Refused) {
        this.fail(socket, this.refusal(body));
      } else if (stage === 'ready-wait' && kind === FrameKind.Ready) {
        stage = 'ready';
        frames.maxFrameBytes = this.options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
        this.onReady(socket);
      } else {
        throw new Error(`unexpected frame kind ${kind} during ${stage}`);
      }
    });

    socket.on('data', (chunk: Buffer) => {
      try {
        frames.push(chunk);
      } catch (e) {
        this.lastProblem = `the core sent something that is not queen RPC: ${(e as Error).message}`;
        this.options.log?.warn({ core: this.addressText, reason: this.lastProblem }, 'rpc connection dropped');
        socket.destroy();
      }
    });
  }

  private onReady(socket: Socket): void {
    this.ready = true;
    this.fatal = null;
    this.backoffMs = this.options.reconnectInitialMs ?? 50;
    this.options.log?.debug({ core: this.addressText }, 'rpc connected');
    for (const call of this.calls.values()) {
      if (call.sentOn === null) {
        call.sentOn = socket;
        writeFrame(socket, call.frame);
      }
    }
    this.notify();
  }

  private onClose(socket: Socket): void {
    if (this.socket !== socket) return;
    const wasReady = this.ready;
    this.socket = null;
    this.ready = false;
    if (wasReady) this.lastProblem = 'the connection was lost';
    for (const [id, call] of this.calls) {
      if (call.sentOn !== socket) continue;
      if (this.fatal) this.settle(id, this.fatal);
      else if (call.retrySafe && !this.closed) call.sentOn = null;
      else {
        this.settle(id, new RpcError('connection_lost', `The connection to the core at ${this.addressText} was lost before it answered ${call.method}; the call may or may not have taken effect.`));
      }
    }
    if (this.fatal) for (const [id, call] of this.calls) if (call.sentOn === null) this.settle(id, this.fatal);
    if (wasReady) this.options.log?.warn({ core: this.addressText }, 'rpc connection lost; reconnecting');
    this.notify();
    if (this.closed) return;
    const delay = this.fatal ? (this.options.reconnectMaxMs ?? 2_000) : this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.reconnectMaxMs ?? 2_000);
    this.reconnectTimer = setTimeout(() => this.dial(), delay * (0.75 + Math.random() / 2));
    this.reconnectTimer.unref();
  }

  private onAnswer(kind: number, body: Buffer): void {
    const r = new ValueReader(body);
    const id = r.uint32();
    const value = r.value();
    if (kind === FrameKind.Reply) return this.settle(id, null, value);
    const { code, message, core } = value as { code: string; message: string; core: boolean };
    this.settle(id, core ? new CoreError(code as CoreErrorCode, message) : new RpcError(code as RpcErrorCode, message));
  }

  private settle(id: number, error: unknown, value?: unknown): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    call.cleanup();
    rpcClientMetrics(call.method).done((performance.now() - call.madeAt) / 1000, error ? failureCode(error) : null);
    if (error) call.reject(error);
    else call.resolve(value);
  }

  private sendCancel(id: number): void {
    if (!this.socket) return;
    const w = frameWriter(FrameKind.Cancel);
    w.uint32(id);
    sendFrame(this.socket, w);
  }

  private notify(): void {
    for (const wake of [...this.stateWaiters]) wake();
    this.stateWaiters.clear();
  }

  asCore(): RpcCore {
    const core: Record<string, unknown> = { address: this.addressText, close: () => this.close(), reachable: () => this.ready };
    for (const method of METHOD_NAMES) core[method] = (request: unknown, options?: CallOptions) => this.call(method, request, options);
    return core as unknown as RpcCore;
  }
}

/** Connects to a core and resolves once the handshake has succeeded; a refusal rejects with its reason. */
export async function connectCore(options: RpcClientOptions): Promise<RpcCore> {
  const client = new RpcClient(options);
  try {
    await client.start();
  } catch (e) {
    await client.close();
    throw e;
  }
  return client.asCore();
}
