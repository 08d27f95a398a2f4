import type { Logger } from 'pino';
import { isCoreError } from '../core/index.js';

/**
 * What a gateway caches from the core and reads again on a timer (the ACL
 * bindings, the client quotas), so several gateways on one core agree. A
 * failed read keeps what was read last and is logged once per episode; a
 * store that is away is logged at debug only, since the core's own
 * availability line already says so once per episode.
 */
export class CoreRefresh {
  private timer: NodeJS.Timeout | null = null;
  private failureLogged = false;

  constructor(
    private readonly read: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly log: Logger,
    /** The sentence for a failed read, given whether anything was read before. */
    private readonly failure: () => string,
  ) {}

  /** Reads now (a failure is logged and retried on the timer), then on the timer. */
  async start(): Promise<void> {
    if (this.timer) return;
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    try {
      await this.read();
      this.failureLogged = false;
    } catch (e) {
      if (!this.failureLogged) this.log[isCoreError(e) && e.code === 'unavailable' ? 'debug' : 'warn']({ err: e }, this.failure());
      this.failureLogged = true;
    }
  }
}
