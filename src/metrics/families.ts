import type { Registry } from 'prom-client';

/**
 * Metric families for the hot path, registered in a prom-client Registry
 * (which writes the exposition) but counted in plain slots.
 *
 * Why not prom-client's own Counter and Histogram here: their label children
 * hash and validate the label values on every inc and observe (0.7 to 1 µs
 * each, measured), and a Kafka request touches five or six series. A slot is
 * an object resolved once per label set and kept by the caller (per API key
 * and version, per topic), so counting is one addition. prom-client reads the
 * slots only when scraped, through the metric interface its Registry takes
 * (`name`, `help`, `type` and `get()` answering the values).
 */

type LabelValues = Record<string, string>;

interface ExportedValue {
  labels: LabelValues;
  value: number;
  metricName?: string;
}

/** What a prom-client Registry calls on a metric when it is scraped. */
abstract class SlotFamily<Slot> {
  protected readonly slots = new Map<string, { labels: LabelValues; slot: Slot }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The slot of one label set, made on first use; callers keep it rather than ask again per event. */
  child(...values: string[]): Slot {
    const key = values.join('\u0000');
    let entry = this.slots.get(key);
    if (!entry) {
      const labels: LabelValues = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      entry = { labels, slot: this.newSlot() };
      this.slots.set(key, entry);
    }
    return entry.slot;
  }

  /** Forgets one label set (a deleted topic), so its series stops being exported. */
  remove(...values: string[]): void {
    this.slots.delete(values.join('\u0000'));
  }

  protected abstract newSlot(): Slot;
  protected abstract values(): ExportedValue[];

  async get(): Promise<{ name: string; help: string; type: string; values: ExportedValue[]; aggregator: 'sum' }> {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: 'sum' };
  }
}

export interface CounterSlot {
  value: number;
}

/** A counter: `slot.value += n` on the hot path. */
export class CounterFamily extends SlotFamily<CounterSlot> {
  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super(name, help, 'counter', labelNames, registry);
  }

  protected newSlot(): CounterSlot {
    return { value: 0 };
  }

  protected values(): ExportedValue[] {
    return [...this.slots.values()].map(({ labels, slot }) => ({ labels, value: slot.value }));
  }
}

/** A gauge kept up to date by its callers (inc and dec around a wait). */
export class GaugeFamily extends SlotFamily<CounterSlot> {
  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super(name, help, 'gauge', labelNames, registry);
  }

  protected newSlot(): CounterSlot {
    return { value: 0 };
  }

  protected values(): ExportedValue[] {
    return [...this.slots.values()].map(({ labels, slot }) => ({ labels, value: slot.value }));
  }
}

export class HistogramSlot {
  /** Observations at or below each bound (cumulated when exported); the last is +Inf. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** A histogram with fixed bounds: `slot.observe(v)` finds the bucket and adds. */
export class HistogramFamily extends SlotFamily<HistogramSlot> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, 'histogram', labelNames, registry);
  }

  protected newSlot(): HistogramSlot {
    return new HistogramSlot(this.bounds);
  }

  protected values(): ExportedValue[] {
    const out: ExportedValue[] = [];
    for (const { labels, slot } of this.slots.values()) {
      let cumulated = 0;
      slot.counts.forEach((n, i) => {
        cumulated += n;
        const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
        out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulated });
      });
      out.push({ metricName: `${this.name}_sum`, labels, value: slot.sum });
      out.push({ metricName: `${this.name}_count`, labels, value: slot.count });
    }
    return out;
  }
}
