import type { Logger } from 'pino';
import { type ClientQuotaEntry, type Core, type QuotaEntity, quotaEntityKey, type QuotaKey } from '../core/index.js';
import { CoreRefresh } from '../access/core-refresh.js';

/**
 * Client quotas as Kafka's broker applies them: produce bytes/s and fetch
 * bytes/s per user (the principal's name), client id, or both, with defaults.
 * The values live in the core (AlterClientQuotas); this gateway caches them,
 * reads them again every `refreshMs`, and measures each quota entity's rate
 * over a sliding window of `samples` windows of `windowMs` (Kafka's
 * quota.window.num = 11 and quota.window.size.seconds = 1).
 *
 * Which value applies, first found, in Kafka's order: user + client id, user
 * + default client id, user, default user + client id, default user +
 * default client id, default user, client id, default client id. Everyone
 * the same entity covers shares one rate (a user quota is the user's across
 * all its connections and client ids); an entity that is a default is
 * measured per user or client id it stands for.
 *
 * A request over its quota is still served; its response carries
 * throttle_time_ms = how long the client must stay quiet for the rate to come
 * back to the quota (Kafka's formula: (rate - quota) / quota × window), at
 * most the whole window, and the connection stops reading for that long
 * (KIP-219), so a client that ignores the field is held back all the same.
 *
 * request_percentage is Kafka's request quota: the time the broker's threads
 * spend on a client's requests, as a percentage of one thread over the same
 * sliding windows (200 = two threads' worth). Here the thread is the
 * gateway's event loop and a request's time is its RequestClock's: from its
 * frame's arrival to its answer, less the time it waited for the core
 * (long-polls and the database, which in Kafka are purgatory and I/O, not
 * thread time). Over it, every response carries the throttle time (the larger
 * of it and a byte-rate one; at most one window, as Kafka caps request
 * throttles), a Fetch is answered empty as for the byte rate, and the
 * connection is muted for that long.
 */

export interface QuotaSettings {
  /** How often quota values are read again from the core. */
  refreshMs: number;
  /** One sample window, ms (Kafka: quota.window.size.seconds × 1000). */
  windowMs: number;
  /** Sample windows kept (Kafka: quota.window.num). */
  samples: number;
}

export const DEFAULT_QUOTA_SETTINGS: Readonly<QuotaSettings> = Object.freeze({ refreshMs: 5_000, windowMs: 1_000, samples: 11 });

/** Bytes in sliding sample windows: Kafka's Rate over a SampledStat. */
class SampledRate {
  private readonly starts: number[] = [];
  private readonly bytes: number[] = [];

  constructor(private readonly settings: QuotaSettings) {}

  /** Whether every sample has aged out: the rate is zero and can be forgotten. */
  idle(now: number): boolean {
    const last = this.starts[this.starts.length - 1];
    return last === undefined || now - last >= this.settings.windowMs * this.settings.samples;
  }

  /** Takes back bytes recorded just now (a response that was not sent after all). */
  unrecord(amount: number): void {
    const last = this.bytes.length - 1;
    if (last >= 0) this.bytes[last] = Math.max(0, this.bytes[last]! - amount);
  }

  record(amount: number, now: number): void {
    const { windowMs, samples } = this.settings;
    const last = this.starts.length - 1;
    if (last >= 0 && now - this.starts[last]! < windowMs) this.bytes[last]! += amount;
    else {
      this.starts.push(now);
      this.bytes.push(amount);
    }
    while (this.starts.length > 0 && now - this.starts[0]! >= windowMs * samples) {
      this.starts.shift();
      this.bytes.shift();
    }
  }

  /**
   * How long to stay quiet for the rate to fall to `quota` bytes/s. The span
   * is at least samples − 1 windows, as Kafka's: a fresh sensor's first
   * burst is averaged over the whole window rather than over its first ms.
   */
  throttleMs(quota: number, now: number): number {
    if (this.starts.length === 0) return 0;
    const { windowMs, samples } = this.settings;
    const spanMs = Math.max(now - this.starts[0]!, (samples - 1) * windowMs);
    const total = this.bytes.reduce((a, b) => a + b, 0);
    const excessMs = (total / quota) * 1000 - spanMs;
    return excessMs <= 0 ? 0 : Math.min(Math.ceil(excessMs), samples * windowMs);
  }
}

/**
 * How long one request kept the gateway busy (see the top): time since the
 * last `take`, less the time spent waiting for core calls made through
 * `meter` (overlapping calls count once).
 */
export class RequestClock {
  private marked: number;
  private waiting = 0;
  private waitingSince = 0;
  private waitedMs = 0;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.marked = now();
  }

  /** The busy time since the last take (or the start), in ms; the next take counts from here. */
  take(): number {
    const now = this.now();
    let waited = this.waitedMs;
    if (this.waiting > 0) {
      waited += now - this.waitingSince;
      this.waitingSince = now;
    }
    this.waitedMs = 0;
    const busy = Math.max(0, now - this.marked - waited);
    this.marked = now;
    return busy;
  }

  /** `core` with every call's wait taken off this request's time. */
  meter<T extends object>(core: T): T {
    return new Proxy(core, {
      get: (target, key, receiver) => {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          this.enter();
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (e) {
            this.leave();
            throw e;
          }
          if (result instanceof Promise) return result.finally(() => this.leave());
          this.leave();
          return result;
        };
      },
    });
  }

  private enter(): void {
    if (this.waiting++ === 0) this.waitingSince = this.now();
  }

  private leave(): void {
    if (--this.waiting === 0) this.waitedMs += this.now() - this.waitingSince;
  }
}

/** The user part of a principal ("User:alice" → "alice"), as quota entities name users. */
function userOf(principal: string): string {
  return principal.startsWith('User:') ? principal.slice(5) : principal;
}

/** What one request earned against its quotas. */
export interface RequestQuota {
  /** Records a Produce request's bytes; the throttle time its response carries (0 within quota). */
  produced(bytes: number): number;
  /**
   * Records a Fetch response's bytes; the throttle time it carries, and
   * whether to send it empty instead, as Kafka's broker does when a fetch
   * would break the quota (the bytes are then not counted). A response that
   * alone exceeds the whole window's allowance still goes out, throttled, or
   * a consumer of one large batch would never progress.
   */
  fetched(bytes: number): { throttleMs: number; withhold: boolean };
  /**
   * Whether a request_percentage quota applies: then the connection gives the
   * handler a metered core (RequestClock.meter), so waits are not counted.
   */
  readonly timed: boolean;
  /** Records the request's time so far against request_percentage; the throttle time that earns (0 within quota, or without a quota). */
  handled(): number;
  /** The longest throttle this request earned: the connection stops reading for it once the request is answered. */
  readonly throttleMs: number;
}

type Rated = Extract<QuotaKey, 'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage'>;

export class QuotaManager {
  private entries = new Map<string, ClientQuotaEntry['values']>();
  private readonly rates = new Map<string, SampledRate>();
  private readonly refresher: CoreRefresh;

  constructor(
    private readonly core: Pick<Core, 'listClientQuotas'>,
    readonly settings: QuotaSettings,
    log: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.refresher = new CoreRefresh(() => this.load(), settings.refreshMs, log, () => 'could not read client quotas from the core; the last ones read stay in force');
  }

  start(): Promise<void> {
    return this.refresher.start();
  }

  stop(): void {
    this.refresher.stop();
  }

  refresh(): Promise<void> {
    return this.refresher.refresh();
  }

  private async load(): Promise<void> {
    const { entries } = await this.core.listClientQuotas();
    this.entries = new Map(entries.map((e) => [quotaEntityKey(e.entity), e.values]));
    // Rates of clients gone quiet are zero: forget them, so client ids that come and go do not pile up.
    const now = this.clock();
    for (const [key, rate] of this.rates) if (rate.idle(now)) this.rates.delete(key);
  }

  /** The quota for a user and client id, and the key of the rate it is measured by; null when none applies. */
  resolve(key: QuotaKey, user: string, clientId: string): { quota: number; rateKey: string } | null {
    if (this.entries.size === 0) return null;
    const candidates: [QuotaEntity, string][] = [
      [{ user, clientId }, `u:${user}|c:${clientId}`],
      [{ user, clientId: null }, `u:${user}|c:${clientId}`],
      [{ user }, `u:${user}`],
      [{ user: null, clientId }, `u:${user}|c:${clientId}`],
      [{ user: null, clientId: null }, `u:${user}|c:${clientId}`],
      [{ user: null }, `u:${user}`],
      [{ clientId }, `c:${clientId}`],
      [{ clientId: null }, `c:${clientId}`],
    ];
    for (const [entity, measured] of candidates) {
      const quota = this.entries.get(quotaEntityKey(entity))?.[key];
      if (quota !== undefined) return { quota, rateKey: `${key}|${measured}` };
    }
    return null;
  }

  /** This request's quotas; `clock` measures its time for request_percentage (none: the request is not timed, as SASL's are not). */
  forRequest(principal: string, clientId: string | null, clock?: RequestClock): RequestQuota {
    const user = userOf(principal);
    const client = clientId ?? '';
    let throttleMs = 0;
    const { windowMs, samples } = this.settings;
    const record = (key: Rated, amount: number): { ms: number; rate: SampledRate | null; quota: number } => {
      const applies = this.resolve(key, user, client);
      if (!applies) return { ms: 0, rate: null, quota: 0 };
      let rate = this.rates.get(applies.rateKey);
      if (!rate) this.rates.set(applies.rateKey, (rate = new SampledRate(this.settings)));
      const now = this.clock();
      rate.record(amount, now);
      // Kafka caps a request-time throttle at one window, a byte-rate one at the whole span.
      const ms = Math.min(rate.throttleMs(applies.quota, now), key === 'request_percentage' ? windowMs : Infinity);
      throttleMs = Math.max(throttleMs, ms);
      return { ms, rate, quota: applies.quota };
    };
    const timed = clock !== undefined && this.resolve('request_percentage', user, client) !== null;
    // Busy ms as percent-seconds (1 s of one thread = 100), so the rate per second reads as a percentage.
    const handled = () => (timed ? record('request_percentage', clock!.take() / 10).ms : 0);
    return {
      timed,
      handled,
      produced: (bytes) => record('producer_byte_rate', bytes).ms,
      fetched: (bytes) => {
        const { ms, rate, quota } = record('consumer_byte_rate', bytes);
        const requestMs = handled();
        // As Kafka's broker: a fetch over either quota is answered empty, its bytes not counted; over the byte
        // rate alone, one that exceeds the whole window's allowance still goes out, or a large batch would never pass.
        const withhold = bytes > 0 && (requestMs > 0 || (ms > 0 && bytes <= (quota * (samples - 1) * windowMs) / 1000));
        if (withhold) rate?.unrecord(bytes);
        return { throttleMs: Math.max(ms, requestMs), withhold };
      },
      get throttleMs() {
        return throttleMs;
      },
    };
  }
}
