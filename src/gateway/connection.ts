import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { requestCodec } from '../../protocol/codec/registry.js';
import { decodeRequestHeader, type RequestHeader } from '../../protocol/headers.js';
import { encodeResponseFrame } from '../../protocol/frames.js';
import { DecodeError } from '../../protocol/primitives/decode-error.js';
import { Reader } from '../../protocol/primitives/reader.js';
import { FrameReader } from './frame-reader.js';
import type { ConnectionState, HandlerContext } from './handler.js';
import type { GatewayRuntime } from './server.js';

/**
 * One client connection: frames in, handlers run concurrently, responses out
 * in request order.
 *
 * Clients pipeline, and Kafka promises responses in request order per
 * connection, so each request takes a slot in `pending` when it arrives and a
 * response waits in its slot until every earlier one has gone out: a slow
 * Fetch holds back the Produce answers behind it, never the other way round.
 * Produce with acks=0 fills its slot with nothing.
 *
 * Reading pauses while too many requests are in flight or the socket's write
 * buffer is above its high-water mark, and resumes when both have eased.
 */

interface Slot {
  correlationId: number;
  /** undefined while the handler runs; null when Kafka sends no response. */
  response: Buffer[] | null | undefined;
}

export class Connection {
  readonly state: ConnectionState;
  private readonly log: Logger;
  private readonly frames: FrameReader;
  private readonly pending: Slot[] = [];
  private readonly closedController = new AbortController();
  private readonly drainController = new AbortController();
  private inFlight = 0;
  private waitingForDrain = false;
  private paused = false;
  private draining = false;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    id: number,
    private readonly runtime: GatewayRuntime,
    private readonly onClosed: (connection: Connection) => void,
  ) {
    const remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.log = runtime.log.child({ connection: id, remote: remoteAddress });
    this.state = {
      id,
      remoteAddress,
      remoteHost: socket.remoteAddress ?? '?',
      clientId: null,
      closed: this.closedController.signal,
      draining: this.drainController.signal,
    };
    this.frames = new FrameReader(runtime.limits.maxFrameBytes, (frame) => this.receive(frame));

    socket.setNoDelay(true);
    if (runtime.limits.idleTimeoutMs > 0) socket.setTimeout(runtime.limits.idleTimeoutMs);
    socket.on('data', (chunk: Buffer) => {
      try {
        this.frames.push(chunk);
      } catch (e) {
        this.fail(e);
      }
    });
    socket.on('timeout', () => {
      // A request still running (a long-poll) is activity, not idleness.
      if (this.inFlight === 0) this.close(`idle for ${runtime.limits.idleTimeoutMs} ms`);
    });
    socket.on('drain', () => {
      this.waitingForDrain = false;
      this.adjustFlow();
    });
    socket.on('error', (e) => this.close(`socket error: ${e.message}`));
    socket.on('close', () => this.close('closed by the client'));
    this.log.debug('connection opened');
  }

  /** Graceful shutdown: stop reading, let in-flight requests answer, then close. */
  drain(): void {
    if (this.closed || this.draining) return;
    this.draining = true;
    this.drainController.abort();
    this.socket.pause();
    this.endIfDrained();
  }

  /** Closes now, dropping whatever is in flight. */
  close(reason: string, level: 'debug' | 'info' | 'warn' = 'debug'): void {
    if (this.closed) return;
    this.closed = true;
    this.log[level]({ reason }, 'connection closed');
    this.closedController.abort(new Error(`connection closed: ${reason}`));
    this.pending.length = 0;
    this.socket.destroy();
    this.onClosed(this);
  }

  private fail(e: unknown): void {
    const reason = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    // Protocol violations are the client's doing; anything else is a bug worth a stack.
    const clientFault = e instanceof DecodeError || (e instanceof Error && e.name === 'FrameTooLarge') || e instanceof UnservedRequest;
    if (clientFault) this.close(reason, 'warn');
    else {
      this.log.error({ err: e }, 'request failed');
      this.close(reason, 'warn');
    }
  }

  private receive(frame: Buffer): void {
    if (this.closed || this.draining) return;
    const r = new Reader(frame);
    const header = decodeRequestHeader(r);
    this.state.clientId = header.clientId;
    const handler = this.runtime.registry.lookup(header.apiKey, header.apiVersion);
    if (!handler) {
      if (header.apiKey === ApiKey.ApiVersions) return this.answer(header, unsupportedApiVersions(this.runtime));
      throw new UnservedRequest(header);
    }
    const body = requestCodec(header.apiKey, header.apiVersion).decode(r);
    // Bytes after the last field are ignored, as Kafka's broker ignores them:
    // librdkafka's Metadata v12 "all topics" request carries three.
    if (r.remaining !== 0) this.log.debug({ api: handler.api.name, version: header.apiVersion, bytes: r.remaining }, 'request has trailing bytes; ignored');

    const slot: Slot = { correlationId: header.correlationId, response: undefined };
    this.pending.push(slot);
    this.inFlight++;
    this.adjustFlow();
    const ctx: HandlerContext = {
      core: this.runtime.core,
      settings: this.runtime.settings,
      log: this.log,
      header,
      connection: this.state,
      shared: this.runtime.shared,
      apis: this.runtime.registry.advertised,
    };
    handler.handle(body, ctx).then(
      (response) => {
        if (this.closed) return;
        slot.response = response === null ? null : encodeResponseFrame(header.apiKey, header.apiVersion, header.correlationId, response);
        this.inFlight--;
        this.flush();
      },
      (e) => {
        if (!this.closed) this.fail(e);
      },
    );
  }

  /** Answers outside a handler (ApiVersions at an unsupported version), still in request order. */
  private answer(header: RequestHeader, body: Record<string, unknown>): void {
    this.pending.push({
      correlationId: header.correlationId,
      // The v0 body: a client that spoke a newer version than we know reads this much at least.
      response: encodeResponseFrame(ApiKey.ApiVersions, 0, header.correlationId, body),
    });
    this.flush();
  }

  /** Writes every response at the head of the queue that is ready, corked so they leave as one writev. */
  private flush(): void {
    let wrote = false;
    while (this.pending.length > 0 && this.pending[0]!.response !== undefined) {
      const response = this.pending.shift()!.response;
      if (!response) continue;
      if (!wrote) this.socket.cork();
      wrote = true;
      for (const chunk of response) {
        if (!this.socket.write(chunk)) this.waitingForDrain = true;
      }
    }
    if (wrote) this.socket.uncork();
    this.adjustFlow();
    this.endIfDrained();
  }

  private adjustFlow(): void {
    if (this.closed || this.draining) return;
    const busy = this.inFlight >= this.runtime.limits.maxInFlightPerConnection || this.waitingForDrain;
    if (busy && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!busy && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private endIfDrained(): void {
    if (!this.draining || this.closed || this.pending.length > 0) return;
    this.socket.end(() => this.close('gateway shutting down'));
  }
}

/** A request for a key or version this gateway does not serve (other than ApiVersions). */
class UnservedRequest extends Error {
  override readonly name = 'UnservedRequest';
  constructor(header: RequestHeader) {
    super(`API key ${header.apiKey} version ${header.apiVersion} is not served by this gateway`);
  }
}

function unsupportedApiVersions(runtime: GatewayRuntime): Record<string, unknown> {
  return { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: runtime.registry.advertised };
}
