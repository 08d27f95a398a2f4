import type { Registry } from 'prom-client';
import type { Core } from '../core/core.js';
import { readCoreState } from './core-state.js';

/**
 * /metrics and /health answered from memory, never blocked on the store.
 *
 * The core's figures (./core-state.ts) are read by one refresh at a time,
 * started by a scrape; the scrape waits for it at most `waitMs` and otherwise
 * answers the figures of the last refresh that finished. /health waits for
 * nothing: it starts a refresh when none runs and answers what is known. The
 * store counts as not answering while a refresh has run longer than
 * `stallMs` (the health timeout), or when the last one failed: a database
 * that hangs (a frozen server, an exhausted pool) costs the answer its
 * freshness, never its time.
 */

export interface StoreStatus {
  answering: boolean;
  /** Why not, as a sentence; null while answering. */
  message: string | null;
  /** When a refresh of the core's figures last finished, in epoch ms; null before the first. */
  lastAnsweredAt: number | null;
}

/** How long a scrape waits for fresh figures before answering the last ones. */
export const DEFAULT_METRICS_WAIT_MS = 500;

export class CoreWatch {
  private last: Registry | null = null;
  private lastAnsweredAt: number | null = null;
  private failure: string | null = null;
  private running: { since: number; done: Promise<void> } | null = null;

  constructor(
    private readonly core: Core,
    private readonly name: string,
    /** How long a refresh may run before the store counts as not answering. */
    private readonly stallMs: number,
    private readonly waitMs = DEFAULT_METRICS_WAIT_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The core's figures: fresh when the store answers within `waitMs`, else the last ones read (null before any). */
  async figures(): Promise<{ registry: Registry | null; fresh: boolean }> {
    let fresh = false;
    const done = this.refresh().then(() => (fresh = this.failure === null));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.waitMs)));
    await Promise.race([done, waited]);
    clearTimeout(timer);
    return { registry: this.last, fresh };
  }

  /** Whether the store answers, as known now; starts a refresh when none runs (unless `look` is false), waiting for nothing. */
  status(look = true): StoreStatus {
    if (look) void this.refresh();
    const stalledMs = this.running ? this.clock() - this.running.since : 0;
    if (stalledMs >= this.stallMs) {
      return { answering: false, message: `${this.name} has not answered for ${stalledMs} ms.`, lastAnsweredAt: this.lastAnsweredAt };
    }
    if (this.failure !== null) return { answering: false, message: `${this.name} does not answer: ${this.failure}`, lastAnsweredAt: this.lastAnsweredAt };
    return { answering: true, message: null, lastAnsweredAt: this.lastAnsweredAt };
  }

  private refresh(): Promise<void> {
    if (this.running) return this.running.done;
    const done = readCoreState(this.core).then(
      (registry) => {
        this.last = registry;
        this.lastAnsweredAt = this.clock();
        this.failure = null;
      },
      (e: unknown) => {
        this.failure = (e as Error)?.message ?? String(e);
      },
    ).finally(() => {
      this.running = null;
    });
    this.running = { since: this.clock(), done };
    return done;
  }
}
