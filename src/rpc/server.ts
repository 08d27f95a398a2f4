/**
 * The RPC server: exposes one Core to gateways over TCP or a Unix
 * socket. Each connection authenticates (./handshake.ts), then sends calls
 * that run concurrently and are answered as they finish, in any order. A
 * call's deadline and a Cancel frame abort its core call through the
 * AbortSignal the core's long-polls take; a connection that goes away aborts
 * everything it had in flight. CoreErrors go back with their code and message.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { isCoreError } from '../core/errors.js';
import type { Core } from '../core/core.js';
import { type RpcAddress } from './address.js';
import { DEFAULT_MAX_FRAME_BYTES, FrameKind, FrameReader, frameWriter, RefusedReason, sendFrame } from './frames.js';
import { confirmationMatches, HELLO_MAGIC, PAKE_VALUE_BYTES, pakeSecret, RPC_VERSION, startExchange, versionProblem } from './handshake.js';
import type { PakeSecret } from './pake.js';
import { METHOD_NAMES, type MethodName } from './methods.js';
import { ValueReader } from './values.js';

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
  /** The shared secret every gateway must prove it knows. */
  secret: string;
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

export class RpcServer {
  private readonly server: Server;
  private readonly connections = new Set<Socket>();
  private readonly secret: PakeSecret;
  /** Connections that have not finished the handshake. */
  private unauthenticated = 0;
  private capLogged = false;

  constructor(private readonly options: RpcServerOptions) {
    this.secret = pakeSecret(options.secret);
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Starts listening; resolves with the bound address (the real port when 0 was asked for). */
  listen(address: RpcAddress): Promise<RpcAddress> {
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
    for (const socket of this.connections) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const { core, log, faults } = this.options;
    const peerName = `${socket.remoteAddress ?? 'unix'}:${socket.remotePort ?? ''}`;
    const cap = this.options.maxUnauthenticated ?? DEFAULT_MAX_UNAUTHENTICATED;
    if (this.unauthenticated >= cap) {
      if (!this.capLogged) log?.warn({ peer: peerName, maxUnauthenticated: cap }, 'rpc connections refused: too many are still in their handshake (logged once until one finishes)');
      this.capLogged = true;
      socket.destroy();
      return;
    }
    this.unauthenticated++;
    let counted = true;
    const authenticatedOrGone = () => {
      if (!counted) return;
      counted = false;
      this.unauthenticated--;
      this.capLogged = false;
      clearTimeout(deadline);
    };
    const handshakeTimeoutMs = this.options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    const deadline = setTimeout(() => {
      log?.warn({ peer: peerName, handshakeTimeoutMs }, 'rpc authentication failed: the handshake did not finish in time');
      socket.destroy();
    }, handshakeTimeoutMs);
    this.connections.add(socket);
    socket.setNoDelay(true);
    const frames = new FrameReader();
    const inFlight = new Map<number, AbortController>();
    const peer = `${socket.remoteAddress ?? 'unix'}:${socket.remotePort ?? ''}`;
    let stage: Stage = 'hello';
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
        return refuse(RefusedReason.Secret, "Authentication failed: the gateway's RPC secret is not this core's; give both the same --rpc-secret (QUEEN_RPC_SECRET).");
      }
      sendFrame(socket, frameWriter(FrameKind.Ready));
      stage = 'ready';
      authenticatedOrGone();
      frames.maxFrameBytes = this.options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
      log?.debug({ peer }, 'rpc connection ready');
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
      Promise.resolve()
        .then(() => call(request, { signal: controller.signal }))
        .then(
          (result) => {
            if (faults?.beforeReply?.({ method, request }) === 'drop-connection') return void socket.destroy();
            answer(FrameKind.Reply, id, result);
          },
          (e: unknown) => {
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

    socket.on('data', (chunk: Buffer) => {
      try {
        for (const { kind, body } of frames.push(chunk)) {
          if (socket.destroyed) return;
          if (stage === 'hello' && kind === FrameKind.Hello) onHello(body);
          else if (stage === 'auth' && kind === FrameKind.Auth) onAuth(body);
          else if (stage === 'ready' && kind === FrameKind.Call) onCall(body);
          else if (stage === 'ready' && kind === FrameKind.Cancel) inFlight.get(new ValueReader(body).uint32())?.abort();
          else if (stage === 'refused') return;
          else return drop(`unexpected frame kind ${kind} during ${stage}`);
        }
      } catch (e) {
        drop((e as Error).message);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      // A peer that got the challenge and left without proving the secret spent its one guess (or found the core is not who it expected): an attempt worth a line.
      if (stage === 'auth' && counted) log?.warn({ peer: peerName }, 'rpc authentication failed: the peer closed the connection after the challenge without proving the secret');
      authenticatedOrGone();
      this.connections.delete(socket);
      for (const controller of inFlight.values()) controller.abort();
      inFlight.clear();
    });
  }
}
