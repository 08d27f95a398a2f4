/**
 * One authenticated-or-authenticating RPC connection, on the innermost layer
 * of its sessions: the hello (./handshake.ts), then calls that run
 * concurrently and are answered as they finish, in any order. A call's
 * deadline and a Cancel frame abort its core call through its AbortSignal; a
 * connection that goes away aborts everything it had in flight. CoreErrors go
 * back with their code and message.
 */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { isCoreError } from '../core/errors.js';
import type { Core } from '../core/core.js';
import { DEFAULT_MAX_FRAME_BYTES, FrameKind, frameWriter, RefusedReason, rpcFrameSplitter, sendFrame } from './frames.js';
import { HELLO_MAGIC, versionProblem } from './handshake.js';
import { METHOD_NAMES, type MethodName } from './methods.js';
import { ValueReader } from './values.js';
import { failureCode, rpcServerMetrics } from '../metrics/rpc.js';
import type { FrameSplitter } from '../../protocol/frame-splitter.js';

export interface RpcFaults {
  /**
   * Runs after the core has answered a call and before the answer is sent;
   * returning 'drop-connection' destroys the connection instead, so the caller
   * never learns the outcome (for exactly-once tests).
   */
  beforeReply?(call: { method: MethodName; request: unknown }): 'drop-connection' | void;
}

/** A connection let in under the cap, until it authenticates or goes. */
export interface Admission {
  peer: string;
  /** The verified client certificate's subject, for the log (mutual TLS). */
  certificateSubject?: string;
  /** Still counted against the cap (not yet authenticated). */
  readonly pending: boolean;
  /** Stops counting it and stops its deadline; idempotent. */
  settle(): void;
}

export interface ServedConnectionOptions {
  core: Core;
  log?: Logger | undefined;
  faults?: RpcFaults | undefined;
  maxFrameBytes?: number | undefined;
  /** The core holds a secret this connection did not prove: its hello is refused. */
  secretRequired: boolean;
  /** The connection came through TLS-PSK (for the log). */
  secretProven: boolean;
}

type Stage = 'hello' | 'ready' | 'refused';

const SECRET_REQUIRED = "Authentication failed: this core requires the shared RPC secret; give the gateway the core's --rpc-secret (QUEEN_RPC_SECRET).";

/** Sends Refused with its sentence and closes, logged; what the peer sends after is read and dropped. */
export function refuseConnection(socket: Socket, admission: Admission, code: number, reason: string, log: Logger | undefined): void {
  log?.warn({ peer: admission.peer, certificate: admission.certificateSubject, reason }, 'rpc connection refused');
  const w = frameWriter(FrameKind.Refused);
  w.uint8(code);
  w.raw(Buffer.from(reason, 'utf8'));
  sendFrame(socket, w);
  socket.end();
  socket.resume();
}

export class ServedConnection {
  private readonly inFlight = new Map<number, AbortController>();
  private stage: Stage = 'hello';
  private readonly frames: FrameSplitter;

  constructor(
    private readonly socket: Socket,
    private readonly admission: Admission,
    private readonly options: ServedConnectionOptions,
  ) {
    socket.setNoDelay(true);
    this.frames = rpcFrameSplitter((kind, body) => this.receive(kind, body));
    socket.on('data', (chunk: Buffer) => {
      try {
        this.frames.push(chunk);
      } catch (e) {
        this.drop((e as Error).message);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      for (const controller of this.inFlight.values()) controller.abort();
      this.inFlight.clear();
    });
  }

  private receive(kind: number, body: Buffer): void {
    if (this.socket.destroyed || this.stage === 'refused') return;
    if (this.stage === 'hello' && kind === FrameKind.Hello) this.onHello(body);
    else if (this.stage === 'ready' && kind === FrameKind.Call) this.onCall(body);
    else if (this.stage === 'ready' && kind === FrameKind.Cancel) this.inFlight.get(new ValueReader(body).uint32())?.abort();
    else this.drop(`unexpected frame kind ${kind} during ${this.stage}`);
  }

  private refuse(code: number, reason: string): void {
    this.stage = 'refused';
    refuseConnection(this.socket, this.admission, code, reason, this.options.log);
  }

  private drop(reason: string): void {
    this.options.log?.warn({ peer: this.admission.peer, reason }, 'rpc connection closed');
    this.socket.destroy();
  }

  private onHello(body: Buffer): void {
    const r = new ValueReader(body);
    if (body.length < 4 + 2 + 8 || !r.bytes(4).equals(HELLO_MAGIC)) return this.drop('the first frame is not a queen RPC hello');
    const problem = versionProblem(r.uint16(), r.bytes(8));
    if (problem) return this.refuse(RefusedReason.Version, problem);
    if (this.options.secretRequired) return this.refuse(RefusedReason.Authentication, SECRET_REQUIRED);
    sendFrame(this.socket, frameWriter(FrameKind.Ready));
    this.stage = 'ready';
    this.admission.settle();
    this.frames.maxFrameBytes = this.options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.options.log?.debug({ peer: this.admission.peer, certificate: this.admission.certificateSubject, secret: this.options.secretProven }, 'rpc connection ready');
  }

  private answer(kind: typeof FrameKind.Reply | typeof FrameKind.Failure, id: number, value: unknown): void {
    if (this.socket.destroyed) return;
    const w = frameWriter(kind);
    w.uint32(id);
    w.value(value);
    sendFrame(this.socket, w);
  }

  private onCall(body: Buffer): void {
    const r = new ValueReader(body);
    const id = r.uint32();
    const method = METHOD_NAMES[r.uint16()];
    const deadlineMs = r.uint32();
    const request = r.value();
    if (method === undefined) return this.answer(FrameKind.Failure, id, { code: 'protocol', message: 'The core has no such method.', core: false });
    const controller = new AbortController();
    this.inFlight.set(id, controller);
    const timer = deadlineMs > 0 ? setTimeout(() => controller.abort(), deadlineMs) : null;
    this.run(id, method, request, controller.signal).finally(() => {
      if (timer) clearTimeout(timer);
      this.inFlight.delete(id);
    });
  }

  /** Calls the core and answers with its result or its failure. */
  private run(id: number, method: MethodName, request: unknown, signal: AbortSignal): Promise<void> {
    const { core, log, faults } = this.options;
    const call = (core[method] as (req: unknown, options: { signal: AbortSignal }) => Promise<unknown>).bind(core);
    const arrived = performance.now();
    const served = (failure: string | null) => rpcServerMetrics(method).done((performance.now() - arrived) / 1000, failure);
    return Promise.resolve()
      .then(() => call(request, { signal }))
      .then(
        (result) => {
          served(null);
          if (faults?.beforeReply?.({ method, request }) === 'drop-connection') return void this.socket.destroy();
          this.answer(FrameKind.Reply, id, result);
        },
        (e: unknown) => {
          served(failureCode(e));
          if (isCoreError(e)) return this.answer(FrameKind.Failure, id, { code: e.code, message: e.message, core: true });
          log?.error({ err: e, method }, 'core call failed');
          this.answer(FrameKind.Failure, id, { code: 'remote_failure', message: `The core failed on ${method}: ${(e as Error)?.message ?? String(e)}`, core: false });
        },
      )
      .catch((e: unknown) => this.drop(`an answer could not be encoded: ${(e as Error).message}`));
  }
}
