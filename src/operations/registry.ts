import { Counter, Gauge, Registry } from 'prom-client';
import type { CoreWatch } from './core-watch.js';
import { exposition } from '../metrics/process.js';

/**
 * The HTTP API's own counters (one set per API instance), and the exposition
 * every /metrics answers with: the process's series (./process.ts: Kafka
 * requests, connections, the RPC, PostgreSQL, Node), then these counters, then
 * the core's figures (./core-state.ts, read through ./core-watch.ts: fresh,
 * or the last read while the store does not answer, with
 * queen_store_answering saying which). Counters count what this HTTP API did;
 * Kafka traffic is in the process's series.
 */

type Labels = Readonly<Record<string, string>>;

/** A labelled counter the routes add to by label object; off the Kafka hot path, so prom-client's own. */
class LabelledCounter {
  private readonly counter: Counter;

  constructor(registry: Registry, name: string, help: string, labelNames: string[]) {
    this.counter = new Counter({ name, help, labelNames, registers: [registry] });
  }

  add(labels: Labels, by = 1): void {
    this.counter.inc(labels, by);
  }
}

export class HttpMetrics {
  private readonly registry = new Registry();
  readonly requests = new LabelledCounter(this.registry, 'queen_http_requests_total', 'HTTP requests answered, by route, method and status code.', ['route', 'method', 'status']);
  readonly pushed = new LabelledCounter(this.registry, 'queen_http_pushed_messages_total', 'Messages pushed over HTTP (push and transaction), by queue and outcome (queued or duplicate).', ['queue', 'status']);
  readonly popped = new LabelledCounter(this.registry, 'queen_http_popped_messages_total', 'Messages handed out by HTTP pops, by queue.', ['queue']);
  readonly acked = new LabelledCounter(this.registry, 'queen_http_acks_total', 'Acks over HTTP that applied, by queue and status (completed, failed or dlq).', ['queue', 'status']);
  readonly rollbacks = new LabelledCounter(this.registry, 'queen_http_transaction_rollbacks_total', 'HTTP transactions rolled back, by reason (duplicate, kv_precondition or not_acked).', ['reason']);

  /** The whole exposition: the process's series, these counters, then the core's figures as `watch` has them. */
  async render(watch: CoreWatch): Promise<string> {
    return exposition(this.registry, ...(await watchedFigures(watch)));
  }
}

/** What a process without the HTTP API answers at /metrics: the process's series and the core's figures. */
export async function coreExposition(watch: CoreWatch): Promise<string> {
  return exposition(...(await watchedFigures(watch)));
}

/** Whether the store answered, the age of the core's figures, and the figures (the last read while it does not answer). */
async function watchedFigures(watch: CoreWatch): Promise<Registry[]> {
  const { registry: figures, fresh } = await watch.figures();
  const store = new Registry();
  const { answering, lastAnsweredAt } = watch.status(false);
  new Gauge({ name: 'queen_store_answering', help: 'Whether the core\'s store answered this read of its figures in time (1) or not (0: the figures that follow are the last ones read).', registers: [store] }).set(fresh && answering ? 1 : 0);
  if (lastAnsweredAt !== null) {
    new Gauge({ name: 'queen_store_figures_age_seconds', help: 'Age of the core\'s figures that follow, in seconds.', registers: [store] }).set(Math.max(0, Date.now() - lastAnsweredAt) / 1000);
  }
  return figures ? [store, figures] : [store];
}
