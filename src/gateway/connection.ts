import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { requestCodec } from '../../protocol/codec/registry.js';
import { decodeRequestHeader, type RequestHeader } from '../../protocol/headers.js';
import { encodeResponseFrame } from '../../protocol/frames.js';
import { FrameSizeError, FrameSplitter } from '../../protocol/frame-splitter.js';
import { DecodeError } from '../../protocol/primitives/decode-error.js';
import { Reader } from '../../protocol/primitives/reader.js';
import type { Message } from '../../protocol/codec/compile.js';
import { type CoreErrorCode, isCoreError, type Core } from '../core/index.js';
import type { Authorizer } from '../access/authorizer.js';
import type { ApiHandler, ConnectionState, GatewaySettings, HandlerContext } from './handler.js';
import type { ServerLimits } from './limits.js';
import type { SecurityProtocol } from './listeners.js';
import type { QuotaManager } from './quotas.js';
import type { HandlerRegistry } from './registry.js';
import type { RequestBudget } from './request-budget.js';
import { NONE, transientCoordinatorCode } from './kafka-errors.js';
import { requestMetrics } from '../metrics/kafka.js';
import { ANONYMOUS, SaslAuthenticator, type SaslSettings } from './sasl/authenticator.js';

/** What every connection of one gateway shares. */
export interface GatewayRuntime {
  core: Core;
  limits: ServerLimits;
  log: Logger;
  registry: HandlerRegistry;
  shared: Map<string, unknown>;
  /** Request bytes held across all connections (request-budget.ts). */
  budget: RequestBudget;
  authorizer: Authorizer;
  quotas: QuotaManager;
}

/** What the connections of one listener share. */
export interface ListenerRuntime {
  name: SecurityProtocol;
  /** The gateway's settings with this listener's advertised address. */
  settings: GatewaySettings;
  sasl: SaslSettings | null;
}

import { RequestClock } from './quotas.js';

/**
 * One client connection: frames in, handlers run concurrently (but for the
 * few APIs whose effects depend on their order, ORDERED_APIS), responses out
 * in request order.
 *
 * Clients pipeline, and Kafka promises responses in request order per
 * connection, so each request takes a slot in `pending` when it arrives and a
 * response waits in its slot until every earlier one has gone out: a slow
 * Fetch holds back the Produce answers behind it, never the other way round.
 * Produce with acks=0 fills its slot with nothing.
 *
 * Reading pauses while too many requests are in flight, the socket's write
 * buffer is above its high-water mark, or the gateway-wide request budget
 * (request-budget.ts) has no room for the frame being read, and resumes when
 * all have eased.
 *
 * A frame, once begun, must arrive whole within the frame timeout (counted
 * afresh after each pause by the gateway): a client trickling a byte at a time
 * keeps the socket busy but cannot hold its buffer for ever. Idle connections
 * (no bytes, nothing in flight) close after the idle timeout.
 *
 * A protocol violation stops reading at once, but the requests that came
 * before it on the connection are still answered; then it closes, logged.
 *
 * On a SASL listener the connection reads small frames (the SASL receive
 * limit) and must authenticate within the authentication deadline; until it
 * has, only the SASL exchange is served (./sasl/authenticator.ts).
 */

interface Slot {
  correlationId: number;
  /** Request bytes counted against the gateway's budget until the handler is done. */
  heldBytes: number;
  /** undefined while the handler runs; null when Kafka sends no response. */
  response: Buffer[] | null | undefined;
}

export class Connection {
  readonly state: ConnectionState;
  private readonly log: Logger;
  private readonly frames: FrameSplitter;
  private readonly pending: Slot[] = [];
  private readonly closedController = new AbortController();
  private readonly drainController = new AbortController();
  private inFlight = 0;
  /** The last of this connection's ORDERED_APIS requests: the next one starts when it has finished. */
  private orderedTail: Promise<unknown> = Promise.resolve();
  private waitingForDrain = false;
  private paused = false;
  private draining = false;
  private closed = false;
  /** Set when a protocol violation stopped reading: the reason the connection closes once earlier requests are answered. */
  private faulted: string | null = null;
  private ending = false;
  /** Budget bytes granted to the frame being read (its claimed size). */
  private frameReservation = 0;
  /** Waiting in the budget's line, for the frame being read or (size 0) for the total to ease. */
  private budgetWait: { bytes: number } | null = null;
  private frameTimer: NodeJS.Timeout | null = null;
  /** Reading stops until then: a client over its quota is held back (KIP-219), whether or not it honours throttle_time_ms. */
  private mutedUntil = 0;
  private muteTimer: NodeJS.Timeout | null = null;
  private authenticationTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly socket: Socket,
    id: number,
    private readonly runtime: GatewayRuntime,
    private readonly listener: ListenerRuntime,
    /** The principal the transport proved (a TLS client certificate's subject), if any. */
    transportPrincipal: string | null,
    private readonly onClosed: (connection: Connection) => void,
  ) {
    const remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.log = runtime.log.child({ connection: id, remote: remoteAddress, listener: listener.name });
    const sasl = listener.sasl
      ? new SaslAuthenticator(listener.sasl, {
          authenticated: (principal, mechanism) => this.authenticated(principal, mechanism),
          failed: (reason, user, mechanism, logged) => this.authenticationFailed(reason, user, mechanism, logged),
          refused: (reason, user, mechanism) => this.logFailedAttempt(reason, user, mechanism),
        })
      : null;
    this.state = {
      id,
      remoteAddress,
      remoteHost: socket.remoteAddress ?? '?',
      clientId: null,
      principal: transportPrincipal ?? ANONYMOUS,
      listener: listener.name,
      sasl,
      closed: this.closedController.signal,
      draining: this.drainController.signal,
    };
    const { limits } = runtime;
    this.frames = new FrameSplitter(sasl ? Math.min(limits.saslMaxReceiveBytes, limits.maxFrameBytes) : limits.maxFrameBytes, (frame) => this.receive(frame));
    if (sasl && limits.authenticationTimeoutMs > 0) {
      this.authenticationTimer = setTimeout(() => {
        this.authenticationTimer = null;
        this.log.warn({ principal: this.state.principal }, `authentication failed: the client did not authenticate within ${limits.authenticationTimeoutMs} ms`);
        this.close('authentication deadline passed');
      }, limits.authenticationTimeoutMs);
    }

    socket.setNoDelay(true);
    if (runtime.limits.idleTimeoutMs > 0) socket.setTimeout(runtime.limits.idleTimeoutMs);
    socket.on('data', (chunk: Buffer) => {
      if (this.faulted !== null || this.closed) return;
      try {
        this.frames.push(chunk);
      } catch (e) {
        this.fail(e);
        return;
      }
      this.trackPartialFrame();
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
    socket.on('close', () => this.close(this.faulted ?? 'closed by the client', this.faulted === null ? 'debug' : this.faultLevel));
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
    this.stopFrameTimer();
    if (this.muteTimer) clearTimeout(this.muteTimer);
    if (this.authenticationTimer !== null) clearTimeout(this.authenticationTimer);
    if (this.budgetWait) this.runtime.budget.cancel(this.onBudgetRoom);
    this.budgetWait = null;
    if (this.frameReservation > 0) this.runtime.budget.release(this.frameReservation);
    this.frameReservation = 0;
    this.socket.destroy();
    this.onClosed(this);
  }

  private fail(e: unknown, request?: { api: string; version: number; stage?: string }): void {
    const reason = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    // Protocol violations are the client's doing; anything else is a bug worth a stack.
    const clientFault = e instanceof DecodeError || e instanceof FrameSizeError || e instanceof UnservedRequest || e instanceof RefusedBeforeAuthentication;
    if (clientFault) return this.closeAfterAnswers(reason);
    if (isCoreError(e) && TRANSIENT_CORE_ERRORS.has(e.code)) {
      // The core logs the fault once per episode, not per request; the client reconnects and retries.
      this.close(`the core could not answer: ${e.message}`, 'debug');
      return;
    }
    this.log.error({ err: e, ...request }, 'request failed');
    this.close(reason, 'warn');
  }

  /**
   * Stops reading for good but answers the requests that came before the
   * violation, as a client that wrote a good request and garbage in one go
   * still waits for the good one's answer; then closes.
   */
  private closeAfterAnswers(reason: string, level: 'debug' | 'warn' = 'warn'): void {
    if (this.closed || this.faulted !== null) return;
    this.faulted = reason;
    this.stopFrameTimer();
    // Reading goes on, its bytes dropped (see the 'data' handler), so a client
    // that hangs up is noticed; paused, the socket would never see its end.
    if (this.paused) this.socket.resume();
    // Long-polls answer with what they have now rather than wait out their maxWait.
    if (!this.draining) this.drainController.abort();
    // A request that waits on others (a JoinGroup mid-rebalance) does not hold the connection open for long.
    setTimeout(() => this.close(reason, level), FAULT_ANSWER_GRACE_MS).unref();
    this.faultLevel = level;
    this.endIfDrained();
  }

  private faultLevel: 'debug' | 'warn' = 'warn';

  // ─── SASL ─────────────────────────────────────────────────────────────────

  private authenticated(principal: string, mechanism: string): void {
    const first = this.authenticationTimer !== null || this.state.principal !== principal;
    this.state.principal = principal;
    this.frames.maxFrameBytes = this.runtime.limits.maxFrameBytes;
    if (this.authenticationTimer !== null) clearTimeout(this.authenticationTimer);
    this.authenticationTimer = null;
    this.log.debug({ principal, mechanism }, first ? 'authenticated' : 're-authenticated');
  }

  /** One line per failed attempt, naming who tried and from where (the logger carries the address), never the secret; then the connection ends. */
  private authenticationFailed(reason: string, user: string | null, mechanism: string | null, logged = false): void {
    if (!logged) this.logFailedAttempt(reason, user, mechanism);
    this.closeAfterAnswers(`authentication failed`, 'debug');
  }

  private logFailedAttempt(reason: string, user: string | null, mechanism: string | null): void {
    this.log.warn({ user, mechanism }, `authentication failed: ${reason.replace(/^Authentication failed:? ?/, '')}`);
  }

  /** Runs `handle` once every earlier ordered request of this connection has finished, successfully or not. */
  private inOrder<T>(handle: () => Promise<T>): Promise<T> {
    const run = this.orderedTail.then(handle);
    this.orderedTail = run.catch(() => {});
    return run;
  }

  /** A bare SASL token after SaslHandshake v0: answered with a bare size-prefixed token, in order with everything else. */
  private receiveRawToken(frame: Buffer, heldBytes: number): void {
    const slot: Slot = { correlationId: -1, heldBytes, response: undefined };
    this.pending.push(slot);
    this.inFlight++;
    this.adjustFlow();
    this.state.sasl!.authenticate(frame, Date.now).then(
      (answer) => {
        this.releaseHeld(slot.heldBytes);
        if (this.closed) return;
        // A refusal has no frame to travel in on this path: the connection just closes (Kafka's behaviour too).
        if (answer.errorCode !== NONE) slot.response = null;
        else {
          const size = Buffer.allocUnsafe(4);
          size.writeInt32BE(answer.authBytes.length);
          slot.response = [size, answer.authBytes];
        }
        this.inFlight--;
        this.flush();
      },
      (e) => {
        this.releaseHeld(slot.heldBytes);
        if (!this.closed) this.fail(e, { api: 'SASL token', version: 0 });
      },
    );
  }

  // ─── Frames being read: the budget and the frame deadline ─────────────────

  /** After each chunk: a frame still arriving needs room in the budget and runs against the frame deadline. */
  private trackPartialFrame(): void {
    if (this.closed || this.faulted !== null) return;
    if (!this.frames.inProgress) return this.stopFrameTimer();
    const claimed = this.frames.claimedSize;
    if (claimed !== null && this.frameReservation === 0 && this.budgetWait === null) {
      if (this.runtime.budget.request(claimed, this.onBudgetRoom)) this.frameReservation = claimed;
      else this.budgetWait = { bytes: claimed };
    }
    if (this.budgetWait !== null) {
      // Waiting for room pauses reading, which stops the deadline until reading resumes.
      this.adjustFlow();
      return;
    }
    if (!this.paused) this.startFrameTimer();
  }

  /** Starts the deadline for the frame in progress, unless it runs already; each pause by the gateway stops it and a resume starts it afresh. */
  private startFrameTimer(): void {
    if (this.frameTimer !== null || this.runtime.limits.frameTimeoutMs <= 0 || !this.frames.inProgress) return;
    this.frameTimer = setTimeout(() => {
      this.frameTimer = null;
      const claimed = this.frames.claimedSize;
      const of = claimed === null ? '' : ` of ${claimed + 4}`;
      this.close(`a request frame did not arrive whole within ${this.runtime.limits.frameTimeoutMs} ms (${this.frames.receivedBytes}${of} bytes came)`, 'warn');
    }, this.runtime.limits.frameTimeoutMs);
  }

  private readonly onBudgetRoom = (): void => {
    const wait = this.budgetWait;
    this.budgetWait = null;
    if (this.closed) {
      if (wait) this.runtime.budget.release(wait.bytes);
      return;
    }
    if (wait && wait.bytes > 0) this.frameReservation = wait.bytes;
    this.adjustFlow();
    this.trackPartialFrame();
  };

  private stopFrameTimer(): void {
    if (this.frameTimer !== null) clearTimeout(this.frameTimer);
    this.frameTimer = null;
  }

  /** Budget bytes for a frame that just arrived whole: its reservation, or counted now if it came in one chunk. */
  private holdFrame(frame: Buffer): number {
    this.stopFrameTimer();
    if (this.frameReservation > 0) {
      const held = this.frameReservation;
      this.frameReservation = 0;
      return held;
    }
    this.runtime.budget.hold(frame.length);
    return frame.length;
  }

  private releaseHeld(bytes: number): void {
    if (bytes > 0) this.runtime.budget.release(bytes);
  }

  private receive(frame: Buffer): void {
    const clock = new RequestClock();
    const arrived = performance.now();
    const heldBytes = this.holdFrame(frame);
    if (this.closed || this.draining || this.faulted !== null) return this.releaseHeld(heldBytes);
    if (this.state.sasl?.expectsRawToken) return this.receiveRawToken(frame, heldBytes);
    let header: RequestHeader;
    let handler: ApiHandler | undefined;
    let body: Message;
    try {
      const r = new Reader(frame);
      header = decodeRequestHeader(r);
      this.state.clientId = header.clientId;
      const refusal = this.state.sasl?.refusal(header.apiKey, Date.now()) ?? null;
      if (refusal !== null) throw new RefusedBeforeAuthentication(refusal);
      handler = this.runtime.registry.lookup(header.apiKey, header.apiVersion);
      if (!handler) {
        if (header.apiKey === ApiKey.ApiVersions) {
          this.releaseHeld(heldBytes);
          return this.answer(header, unsupportedApiVersions(this.runtime));
        }
        throw new UnservedRequest(header);
      }
      body = requestCodec(header.apiKey, header.apiVersion).decode(r);
      // Bytes after the last field are ignored, as Kafka's broker ignores them:
      // librdkafka's Metadata v12 "all topics" request carries three.
      if (r.remaining !== 0) this.log.debug({ api: handler.api.name, version: header.apiVersion, bytes: r.remaining }, 'request has trailing bytes; ignored');
    } catch (e) {
      this.releaseHeld(heldBytes);
      throw e;
    }

    const slot: Slot = { correlationId: header.correlationId, heldBytes, response: undefined };
    this.pending.push(slot);
    this.inFlight++;
    this.adjustFlow();
    const principal = this.state.principal;
    // SASL requests are the authenticator's in Kafka, outside the request quota.
    const quota = this.runtime.quotas.forRequest(principal, header.clientId, UNTIMED_APIS.has(header.apiKey) ? undefined : clock);
    const ctx: HandlerContext = {
      core: quota.timed ? clock.meter(this.runtime.core) : this.runtime.core,
      settings: this.listener.settings,
      log: this.log,
      header,
      connection: this.state,
      shared: this.runtime.shared,
      apis: this.runtime.registry.advertised,
      access: this.runtime.authorizer.accessFor(principal, this.state.remoteHost),
      authorizer: this.runtime.authorizer,
      quota,
      quotas: this.runtime.quotas,
    };
    // Requests whose effects depend on their order run one after another on a connection, as Kafka runs them.
    const handled = ORDERED_APIS.has(header.apiKey) ? this.inOrder(() => handler.handle(body, ctx)) : handler.handle(body, ctx);
    const answered = handled.catch((e: unknown) => {
      const errorCode = handler.unavailable ? transientCoordinatorCode(e) : undefined;
      if (errorCode === undefined) throw e;
      // The core logs the fault once per episode; the client retries on the code.
      return handler.unavailable!(body, errorCode, ctx);
    });
    answered.then(
      (response) => {
        this.releaseHeld(slot.heldBytes);
        if (this.closed) return;
        const requestThrottleMs = ctx.quota.handled();
        if (requestThrottleMs > 0 && response !== null && typeof (response as { throttleTimeMs?: unknown }).throttleTimeMs === 'number') {
          const answer = response as { throttleTimeMs: number };
          answer.throttleTimeMs = Math.max(answer.throttleTimeMs, requestThrottleMs);
        }
        if (ctx.quota.throttleMs > 0) this.mute(ctx.quota.throttleMs);
        try {
          slot.response = response === null ? null : encodeResponseFrame(header.apiKey, header.apiVersion, header.correlationId, response);
        } catch (e) {
          // A handler's answer the codec cannot write is a bug: it costs this connection, never the process.
          return this.fail(e, { api: handler.api.name, version: header.apiVersion, stage: 'encoding the response' });
        }
        requestMetrics(header.apiKey, header.apiVersion).answered(performance.now() - arrived, response, ctx.quota.throttleMs);
        this.inFlight--;
        this.flush();
      },
      (e) => {
        this.releaseHeld(slot.heldBytes);
        if (!this.closed) this.fail(e, { api: handler.api.name, version: header.apiVersion });
      },
    );
  }

  /** Answers outside a handler (ApiVersions at an unsupported version), still in request order. */
  private answer(header: RequestHeader, body: Record<string, unknown>): void {
    this.pending.push({
      correlationId: header.correlationId,
      heldBytes: 0,
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

  /** Stops reading for `ms` (a quota's throttle time); a longer mute already running stays. */
  private mute(ms: number): void {
    const until = Date.now() + ms;
    if (until <= this.mutedUntil) return;
    this.mutedUntil = until;
    if (this.muteTimer) clearTimeout(this.muteTimer);
    this.muteTimer = setTimeout(() => {
      this.muteTimer = null;
      this.mutedUntil = 0;
      this.adjustFlow();
    }, ms);
    this.adjustFlow();
  }

  private adjustFlow(): void {
    if (this.closed || this.draining || this.faulted !== null) return;
    // Past the budget's cap (whole frames counted as they came): wait in line for the total to ease.
    if (this.budgetWait === null && this.runtime.budget.heldBytes > this.runtime.budget.limit) {
      if (!this.runtime.budget.request(0, this.onBudgetRoom)) this.budgetWait = { bytes: 0 };
    }
    const busy = this.inFlight >= this.runtime.limits.maxInFlightPerConnection || this.waitingForDrain || this.budgetWait !== null || this.mutedUntil > 0;
    if (busy && !this.paused) {
      this.paused = true;
      this.socket.pause();
      // No bytes can come while the gateway is not reading: that time is not the client's.
      this.stopFrameTimer();
    } else if (!busy && this.paused) {
      this.paused = false;
      this.socket.resume();
      this.startFrameTimer();
    }
  }

  private endIfDrained(): void {
    if (this.closed || this.pending.length > 0) return;
    const reason = this.faulted ?? (this.draining ? 'gateway shutting down' : null);
    if (reason === null || this.ending) return;
    this.ending = true;
    // end, not destroy: answers already written must reach the client first.
    this.socket.end(() => this.close(reason, this.faulted === null ? 'debug' : this.faultLevel));
  }
}

/** Requests outside the request quota (request_percentage): the SASL exchange. */
const UNTIMED_APIS: ReadonlySet<number> = new Set([ApiKey.SaslHandshake, ApiKey.SaslAuthenticate]);

/**
 * The APIs whose effects a client orders by sending them in turn on one
 * connection, without waiting for each answer: librdkafka sends EndTxn right
 * behind an AddPartitionsToTxn still in flight, and async OffsetCommits one
 * behind another. Kafka handles a connection's requests one at a time; run
 * side by side here, the core could take the EndTxn first (answering
 * INVALID_TXN_STATE to an abort, seen in the fault campaign) or store the
 * older commit last. Everything else still runs concurrently.
 */
const ORDERED_APIS: ReadonlySet<number> = new Set([ApiKey.OffsetCommit, ApiKey.InitProducerId, ApiKey.AddPartitionsToTxn, ApiKey.AddOffsetsToTxn, ApiKey.EndTxn, ApiKey.TxnOffsetCommit]);

/** How long requests that came before a protocol violation may take to answer before the connection closes anyway. */
const FAULT_ANSWER_GRACE_MS = 5_000;

/** Core errors that mean "not now" rather than "never": the store is down or the core is closing. */
const TRANSIENT_CORE_ERRORS: ReadonlySet<CoreErrorCode> = new Set(['unavailable', 'closed']);

/** A request for a key or version this gateway does not serve (other than ApiVersions). */
class UnservedRequest extends Error {
  override readonly name = 'UnservedRequest';
  constructor(header: RequestHeader) {
    super(`API key ${header.apiKey} version ${header.apiVersion} is not served by this gateway`);
  }
}

/** A request a SASL listener does not serve in the connection's authentication state. */
class RefusedBeforeAuthentication extends Error {
  override readonly name = 'RefusedBeforeAuthentication';
}

function unsupportedApiVersions(runtime: GatewayRuntime): Record<string, unknown> {
  return { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: runtime.registry.advertised };
}
