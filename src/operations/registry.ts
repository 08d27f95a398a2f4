import { Counter, Registry } from 'prom-client';
import type { Core } from '../core/core.js';
import { readCoreState } from './core-state.js';
import { exposition } from '../metrics/process.js';

/**
 * The HTTP API's own counters (one set per API instance), and the exposition
 * every /metrics answers with: the process's series (./process.ts: Kafka
 * requests, connections, the RPC, PostgreSQL, Node), then these counters, then
 * the core's figures read now (./core-state.ts). Counters count what this HTTP
 * API did; Kafka traffic is in the process's series.
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

  /** The whole exposition: the process's series, these counters, then the core's figures read now. */
  async render(core: Core): Promise<string> {
    return exposition(this.registry, await readCoreState(core));
  }
}

/** What a process without the HTTP API answers at /metrics: the process's series and the core's figures. */
export async function coreExposition(core: Core): Promise<string> {
  return exposition(await readCoreState(core));
}
