import type { Core } from '../core/core.js';

/**
 * Prometheus text exposition (format 0.0.4), written here rather than with a
 * client library: the API has a handful of counters and two gauges, and the
 * format is a few lines per family. Counters count what this HTTP API did
 * (Kafka traffic is not in them); the gauges are read from the core at
 * scrape time, so they cover every protocol and every node on the engine.
 */

type Labels = Readonly<Record<string, string>>;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

export function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

export class Family {
  private readonly values = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly type: 'counter' | 'gauge',
    readonly help: string,
  ) {}

  add(labels: Labels, by = 1): void {
    const key = labelText(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`);
    for (const [labels, value] of this.values) lines.push(`${this.name}${labels} ${value}`);
  }
}

export class HttpMetrics {
  readonly requests = new Family('queen_http_requests_total', 'counter', 'HTTP requests answered, by route, method and status code.');
  readonly pushed = new Family('queen_http_pushed_messages_total', 'counter', 'Messages pushed over HTTP (push and transaction), by queue and outcome (queued or duplicate).');
  readonly popped = new Family('queen_http_popped_messages_total', 'counter', 'Messages handed out by HTTP pops, by queue.');
  readonly acked = new Family('queen_http_acks_total', 'counter', 'Acks over HTTP that applied, by queue and status (completed or failed).');
  readonly rollbacks = new Family('queen_http_transaction_rollbacks_total', 'counter', 'HTTP transactions rolled back, by reason (duplicate, kv_precondition or not_acked).');

  /** The whole exposition: the counters, then queue depth and group lag read from the core now. */
  async render(core: Core): Promise<string> {
    const lines: string[] = [];
    for (const family of [this.requests, this.pushed, this.popped, this.acked, this.rollbacks]) family.render(lines);
    const depth = new Family('queen_queue_depth_messages', 'gauge', 'Records retained in each queue (high watermark minus log start, summed over partitions).');
    const lag = new Family('queen_consumer_group_lag_messages', 'gauge', 'Records a consumer group has not yet consumed, by group and queue.');
    const highWatermarks = new Map<string, number>();
    for (const queue of await core.listQueues()) {
      const { partitions } = await core.offsets({ partitions: queue.partitions.map((p) => ({ queue: queue.name, partition: p.index })) });
      let retained = 0;
      for (const p of partitions) {
        if (p.error) continue;
        retained += p.highWatermark - p.logStartOffset;
        highWatermarks.set(`${p.queue}\u0000${p.partition}`, p.highWatermark);
      }
      depth.add({ queue: queue.name }, retained);
    }
    for (const { group } of (await core.listGroups()).groups) {
      const { offsets } = await core.fetchOffsets({ group, partitions: null });
      for (const o of offsets) {
        const hw = highWatermarks.get(`${o.queue}\u0000${o.partition}`);
        if (hw !== undefined && o.offset >= 0) lag.add({ group, queue: o.queue }, Math.max(0, hw - o.offset));
      }
    }
    depth.render(lines);
    lag.render(lines);
    return lines.join('\n') + '\n';
  }
}
