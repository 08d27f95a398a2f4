import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiKey } from '../../protocol/api-keys.js';
import type { RequestHeader } from '../../protocol/headers.js';
import { encodeResponseFrame } from '../../protocol/frames.js';
import { FrameSizeError, FrameSplitter } from '../../protocol/frame-splitter.js';
import { DecodeError } from '../../protocol/primitives/decode-error.js';
import type { Message } from '../../protocol/codec/compile.js';
import { type CoreErrorCode, isCoreError } from '../core/index.js';
import type { ApiHandler, ConnectionState, HandlerContext } from './handler.js';
import { RequestClock } from './quotas.js';
import type { GatewayRuntime, ListenerRuntime } from './runtime.js';
import { NONE, transientCoordinatorCode } from './kafka-errors.js';
import { requestMetrics } from '../metrics/kafka.js';
import { ANONYMOUS, SaslAuthenticator, type SaslSettings } from './sasl/authenticator.js';
import { FrameIntake } from './frame-intake.js';
import { readRequest, RefusedBeforeAuthentication, UnservedRequest, type ReadRequest } from './request-intake.js';
import { ResponseOrder, type Slot } from './response-order.js';
import { OrderedRequests } from './ordered-requests.js';

/**
 * One client connection: frames in (frame-intake.ts, request-intake.ts),
 * handlers run concurrently (but for the few APIs whose effects depend on
 * their order, ./ordered-requests.ts), responses out in request order
 * (response-order.ts).
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
export class Connection {
  readonly state: ConnectionState;
  private readonly log: Logger;
  private readonly frames: FrameSplitter;
  private readonly intake: FrameIntake;
  private readonly responses = new ResponseOrder();
  private readonly closedController = new AbortController();
  private readonly drainController = new AbortController();
  private inFlight = 0;
  /** The requests whose effects depend on their order, run one after another (./ordered-requests.ts). */
  private readonly ordered = new OrderedRequests();
  private waitingForDrain = false;
  private paused = false;
  private draining = false;
  private closed = false;
  /** Set when a protocol violation stopped reading: the reason the connection closes once earlier requests are answered. */
  private faulted: string | null = null;
  private ending = false;
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
    const sasl = listener.sasl ? this.saslAuthenticator(listener.sasl) : null;
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
    this.intake = new FrameIntake(this.frames, runtime.budget, limits.frameTimeoutMs, {
      stopped: () => this.closed || this.faulted !== null,
      closed: () => this.closed,
      paused: () => this.paused,
      adjustFlow: () => this.adjustFlow(),
      close: (reason, level) => this.close(reason, level),
    });
    if (sasl && limits.authenticationTimeoutMs > 0) this.startAuthenticationDeadline(limits.authenticationTimeoutMs);
    this.listen(socket);
    this.log.debug('connection opened');
  }

  private listen(socket: Socket): void {
    socket.setNoDelay(true);
    if (this.runtime.limits.idleTimeoutMs > 0) socket.setTimeout(this.runtime.limits.idleTimeoutMs);
    socket.on('data', (chunk: Buffer) => {
      if (this.faulted !== null || this.closed) return;
      try {
        this.frames.push(chunk);
      } catch (e) {
        this.fail(e);
        return;
      }
      this.intake.track();
    });
    socket.on('timeout', () => {
      // A request still running (a long-poll) is activity, not idleness.
      if (this.inFlight === 0) this.close(`idle for ${this.runtime.limits.idleTimeoutMs} ms`);
    });
    socket.on('drain', () => {
      this.waitingForDrain = false;
      this.adjustFlow();
    });
    socket.on('error', (e) => this.close(`socket error: ${e.message}`));
    socket.on('close', () => this.close(this.faulted ?? 'closed by the client', this.faulted === null ? 'debug' : this.faultLevel));
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
    this.responses.clear();
    this.intake.close();
    if (this.muteTimer) clearTimeout(this.muteTimer);
    if (this.authenticationTimer !== null) clearTimeout(this.authenticationTimer);
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
    this.intake.stopDeadline();
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

  private saslAuthenticator(settings: SaslSettings): SaslAuthenticator {
    return new SaslAuthenticator(settings, {
      authenticated: (principal, mechanism) => this.authenticated(principal, mechanism),
      failed: (reason, user, mechanism, logged) => this.authenticationFailed(reason, user, mechanism, logged),
      refused: (reason, user, mechanism) => this.logFailedAttempt(reason, user, mechanism),
    });
  }

  private startAuthenticationDeadline(ms: number): void {
    this.authenticationTimer = setTimeout(() => {
      this.authenticationTimer = null;
      this.log.warn({ principal: this.state.principal }, `authentication failed: the client did not authenticate within ${ms} ms`);
      this.close('authentication deadline passed');
    }, ms);
  }

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

  /** A bare SASL token after SaslHandshake v0: answered with a bare size-prefixed token, in order with everything else. */
  private receiveRawToken(frame: Buffer, heldBytes: number): void {
    const slot = this.responses.take(-1, heldBytes);
    this.inFlight++;
    this.adjustFlow();
    this.state.sasl!.authenticate(frame, Date.now).then(
      (answer) => {
        this.intake.release(slot.heldBytes);
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
        this.intake.release(slot.heldBytes);
        if (!this.closed) this.fail(e, { api: 'SASL token', version: 0 });
      },
    );
  }

  private receive(frame: Buffer): void {
    const clock = new RequestClock();
    const arrived = performance.now();
    const heldBytes = this.intake.hold(frame);
    if (this.closed || this.draining || this.faulted !== null) return this.intake.release(heldBytes);
    if (this.state.sasl?.expectsRawToken) return this.receiveRawToken(frame, heldBytes);
    let request: ReadRequest;
    try {
      request = readRequest(frame, this.state, this.runtime.registry, this.log);
    } catch (e) {
      this.intake.release(heldBytes);
      throw e;
    }
    if (request.handler === null) {
      this.intake.release(heldBytes);
      return this.answer(request.header, request.body);
    }
    const slot = this.responses.take(request.header.correlationId, heldBytes);
    this.inFlight++;
    this.adjustFlow();
    this.dispatch(request.header, request.handler, request.body, slot, clock, arrived);
  }

  /** Runs the handler, a coordinator's "not now" answered with its code, and fills the request's slot with the answer. */
  private dispatch(header: RequestHeader, handler: ApiHandler, body: Message, slot: Slot, clock: RequestClock, arrived: number): void {
    const ctx = this.handlerContext(header, clock);
    // Requests whose effects depend on their order run one after another on a connection, as Kafka runs them.
    const handled = this.ordered.run(header.apiKey, () => handler.handle(body, ctx));
    const answered = handled.catch((e: unknown) => {
      const errorCode = handler.unavailable ? transientCoordinatorCode(e) : undefined;
      if (errorCode === undefined) throw e;
      // The core logs the fault once per episode; the client retries on the code.
      return handler.unavailable!(body, errorCode, ctx);
    });
    answered.then(
      (response) => {
        this.intake.release(slot.heldBytes);
        if (this.closed) return;
        this.throttle(ctx, response);
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
        this.intake.release(slot.heldBytes);
        if (!this.closed) this.fail(e, { api: handler.api.name, version: header.apiVersion });
      },
    );
  }

  private handlerContext(header: RequestHeader, clock: RequestClock): HandlerContext {
    const principal = this.state.principal;
    // SASL requests are the authenticator's in Kafka, outside the request quota.
    const quota = this.runtime.quotas.forRequest(principal, header.clientId, UNTIMED_APIS.has(header.apiKey) ? undefined : clock);
    return {
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
  }

  /** A request over its quota: the answer's throttle time says how long, and reading stops that long (KIP-219). */
  private throttle(ctx: HandlerContext, response: unknown): void {
    const requestThrottleMs = ctx.quota.handled();
    if (requestThrottleMs > 0 && response !== null && typeof (response as { throttleTimeMs?: unknown }).throttleTimeMs === 'number') {
      const answer = response as { throttleTimeMs: number };
      answer.throttleTimeMs = Math.max(answer.throttleTimeMs, requestThrottleMs);
    }
    if (ctx.quota.throttleMs > 0) this.mute(ctx.quota.throttleMs);
  }

  /** Answers outside a handler (ApiVersions at an unsupported version), still in request order. */
  private answer(header: RequestHeader, body: Record<string, unknown>): void {
    // The v0 body: a client that spoke a newer version than we know reads this much at least.
    this.responses.ready(header.correlationId, encodeResponseFrame(ApiKey.ApiVersions, 0, header.correlationId, body));
    this.flush();
  }

  /** Writes every response at the head of the line that is ready. */
  private flush(): void {
    if (this.responses.writeReady(this.socket)) this.waitingForDrain = true;
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
    this.intake.waitIfBudgetFull();
    const busy = this.inFlight >= this.runtime.limits.maxInFlightPerConnection || this.waitingForDrain || this.intake.waitingForBudget || this.mutedUntil > 0;
    if (busy && !this.paused) {
      this.paused = true;
      this.socket.pause();
      // No bytes can come while the gateway is not reading: that time is not the client's.
      this.intake.stopDeadline();
    } else if (!busy && this.paused) {
      this.paused = false;
      this.socket.resume();
      this.intake.startDeadline();
    }
  }

  private endIfDrained(): void {
    if (this.closed || this.responses.waiting > 0) return;
    const reason = this.faulted ?? (this.draining ? 'gateway shutting down' : null);
    if (reason === null || this.ending) return;
    this.ending = true;
    // end, not destroy: answers already written must reach the client first.
    this.socket.end(() => this.close(reason, this.faulted === null ? 'debug' : this.faultLevel));
  }
}

/** Requests outside the request quota (request_percentage): the SASL exchange. */
const UNTIMED_APIS: ReadonlySet<number> = new Set([ApiKey.SaslHandshake, ApiKey.SaslAuthenticate]);

/** How long requests that came before a protocol violation may take to answer before the connection closes anyway. */
const FAULT_ANSWER_GRACE_MS = 5_000;

/** Core errors that mean "not now" rather than "never": the store is down or the core is closing. */
const TRANSIENT_CORE_ERRORS: ReadonlySet<CoreErrorCode> = new Set(['unavailable', 'closed']);
