import { Gauge } from 'prom-client';
import { apiName } from '../../protocol/api-keys.js';
import { errorName } from '../../protocol/error-codes.js';
import { BATCH_HEADER_SIZE, BATCH_LENGTH_PREFIX, BatchAttr, BatchPos } from '../../protocol/records/batch-header.js';
import { CounterFamily, GaugeFamily, HistogramFamily, type CounterSlot, type HistogramSlot } from './families.js';
import { processRegistry } from './process.js';

/**
 * What the Kafka listener does, under the names the Prometheus JMX exporter's
 * standard Kafka rules give a broker's MBeans (kafka.network RequestMetrics,
 * kafka.server BrokerTopicMetrics, DelayedOperationPurgatory,
 * socket-server-metrics), so a Kafka dashboard reads a gateway unchanged
 * where the meaning is the same. Series Kafka has no MBean for keep the
 * queen_ prefix. docs/metrics.md lists every one.
 *
 * Everything here is counted in slots resolved once (./families.ts): per API
 * key and version, per topic, per listener.
 */

const r = processRegistry;

const requests = new CounterFamily('kafka_network_requestmetrics_requests_total', 'Kafka requests received, by API (Kafka\'s request name) and version.', ['request', 'version'], r);
// Milliseconds, as Kafka's TotalTimeMs; a histogram rather than Kafka's
// percentile gauges so the figures of several gateways add up (docs/metrics.md).
const TOTAL_TIME_BOUNDS_MS = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000];
const totalTime = new HistogramFamily('kafka_network_requestmetrics_totaltimems', 'Time from a request\'s arrival to its response being ready, in milliseconds, by API (long-polls included, as in Kafka).', ['request'], TOTAL_TIME_BOUNDS_MS, r);
const errors = new CounterFamily('kafka_network_requestmetrics_errors_total', 'Error codes in Kafka responses, by API and error name (NONE included, as Kafka counts it: one per partition, topic or response that carries a code).', ['request', 'error'], r);
const throttleTime = new CounterFamily('queen_quota_throttle_time_ms_total', 'Milliseconds clients were throttled for by their quotas, by API.', ['request'], r);
const throttled = new CounterFamily('queen_quota_throttled_requests_total', 'Requests answered with a throttle time above zero, by API.', ['request'], r);

const messagesIn = new CounterFamily('kafka_server_brokertopicmetrics_messagesin_total', 'Records appended by Produce, by topic.', ['topic'], r);
const bytesIn = new CounterFamily('kafka_server_brokertopicmetrics_bytesin_total', 'Record-batch bytes appended by Produce, by topic.', ['topic'], r);
const bytesOut = new CounterFamily('kafka_server_brokertopicmetrics_bytesout_total', 'Record-batch bytes served by Fetch, by topic.', ['topic'], r);
const messagesOut = new CounterFamily('queen_brokertopicmetrics_messagesout_total', 'Records served by Fetch, by topic (control records excluded; Kafka has no such meter).', ['topic'], r);

const purgatory = new GaugeFamily('kafka_server_delayedoperationpurgatory_purgatorysize', 'Requests held waiting: Fetch long-polls waiting for minBytes or maxWait, Produce requests waiting for their append to be durable.', ['delayedOperation'], r);
export const fetchPurgatory = purgatory.child('Fetch');
export const producePurgatory = purgatory.child('Produce');

const connectionsCreated = new CounterFamily('kafka_server_socket_server_metrics_connection_creation_total', 'Kafka client connections accepted, by listener.', ['listener'], r);
const connectionsClosed = new CounterFamily('kafka_server_socket_server_metrics_connection_close_total', 'Kafka client connections closed, by listener.', ['listener'], r);

// ─── Requests ─────────────────────────────────────────────────────────────────

/** One API key at one version: the slots its requests count in. */
export class RequestMetrics {
  private readonly requests: CounterSlot[];
  private readonly totalTime: HistogramSlot[];
  private readonly errors = new Map<number, CounterSlot>();
  /** Made at the first throttled request, so unthrottled APIs add no series. */
  private throttle: { time: CounterSlot; requests: CounterSlot } | null = null;

  constructor(private readonly request: string, version: number) {
    // Kafka meters a consumer's Fetch under "Fetch" and under "FetchConsumer" too.
    const names = request === 'Fetch' ? ['Fetch', 'FetchConsumer'] : [request];
    this.requests = names.map((name) => requests.child(name, String(version)));
    this.totalTime = names.map((name) => totalTime.child(name));
  }

  /** A request answered (response null: none is sent, as Produce with acks=0) after `ms`. */
  answered(ms: number, response: object | null, throttleMs: number): void {
    for (const slot of this.requests) slot.value++;
    for (const slot of this.totalTime) slot.observe(ms);
    if (throttleMs > 0) {
      this.throttle ??= { time: throttleTime.child(this.request), requests: throttled.child(this.request) };
      this.throttle.time.value += throttleMs;
      this.throttle.requests.value++;
    }
    if (response !== null) countErrorCodes(response, this.countError);
  }

  private readonly countError = (code: number): void => {
    let slot = this.errors.get(code);
    if (!slot) this.errors.set(code, (slot = errors.child(this.request, code === 0 ? 'NONE' : errorName(code))));
    slot.value++;
  };
}

const byKeyAndVersion = new Map<number, RequestMetrics>();

/** The slots of requests of one API key and version, made once. */
export function requestMetrics(apiKey: number, version: number): RequestMetrics {
  const key = apiKey * 256 + version;
  let metrics = byKeyAndVersion.get(key);
  if (!metrics) byKeyAndVersion.set(key, (metrics = new RequestMetrics(apiName(apiKey), version)));
  return metrics;
}

/**
 * Every `errorCode` in a response, wherever it sits (top level, per topic,
 * per partition), as Kafka's errorCounts() gathers them. Record bytes are
 * not walked into.
 */
function countErrorCodes(value: object, count: (code: number) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null && !ArrayBuffer.isView(item)) countErrorCodes(item, count);
    return;
  }
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (key === 'errorCode' && typeof field === 'number') count(field);
    else if (typeof field === 'object' && field !== null && !ArrayBuffer.isView(field)) countErrorCodes(field, count);
  }
}

// ─── Topics ───────────────────────────────────────────────────────────────────

export interface TopicMetrics {
  messagesIn: CounterSlot;
  bytesIn: CounterSlot;
  bytesOut: CounterSlot;
  messagesOut: CounterSlot;
}

const byTopic = new Map<string, TopicMetrics>();

export function topicMetrics(topic: string): TopicMetrics {
  let metrics = byTopic.get(topic);
  if (!metrics) {
    metrics = { messagesIn: messagesIn.child(topic), bytesIn: bytesIn.child(topic), bytesOut: bytesOut.child(topic), messagesOut: messagesOut.child(topic) };
    byTopic.set(topic, metrics);
  }
  return metrics;
}

/** A deleted topic's series go, as Kafka removes a deleted topic's meters. */
export function forgetTopic(topic: string): void {
  if (!byTopic.delete(topic)) return;
  for (const family of [messagesIn, bytesIn, bytesOut, messagesOut]) family.remove(topic);
}

/** Records in stored v2 batches, read from their headers (control batches, transaction markers, not counted). */
export function recordsIn(batches: readonly Buffer[]): number {
  let records = 0;
  for (const bytes of batches) {
    let at = 0;
    while (at + BATCH_HEADER_SIZE <= bytes.length) {
      if ((bytes.readInt16BE(at + BatchPos.Attributes) & BatchAttr.Control) === 0) records += bytes.readInt32BE(at + BatchPos.RecordCount);
      at += BATCH_LENGTH_PREFIX + bytes.readInt32BE(at + BatchPos.BatchLength);
    }
  }
  return records;
}

// ─── Connections ──────────────────────────────────────────────────────────────

/** A Kafka server whose open connections are counted when scraped. */
export interface ConnectionSource {
  /** Calls `visit` once per open connection with its listener and principal. */
  forEachConnection(visit: (listener: string, principal: string) => void): void;
}

const sources = new Set<ConnectionSource>();
const listenersSeen = new Set<string>();

/** Counts `source`'s connections from now on; the function returned stops it (at shutdown). */
export function watchConnections(source: ConnectionSource): () => void {
  sources.add(source);
  return () => sources.delete(source);
}

export interface ListenerMetrics {
  created: CounterSlot;
  closed: CounterSlot;
}

export function listenerMetrics(listener: string): ListenerMetrics {
  listenersSeen.add(listener);
  return { created: connectionsCreated.child(listener), closed: connectionsClosed.child(listener) };
}

new Gauge({
  name: 'kafka_server_socket_server_metrics_connection_count',
  help: 'Open Kafka client connections, by listener.',
  labelNames: ['listener'],
  registers: [r],
  collect() {
    const open = new Map<string, number>([...listenersSeen].map((l) => [l, 0]));
    for (const source of sources) source.forEachConnection((listener) => open.set(listener, (open.get(listener) ?? 0) + 1));
    this.reset();
    for (const [listener, n] of open) this.set({ listener }, n);
  },
});

new Gauge({
  name: 'queen_gateway_connections',
  help: 'Open Kafka client connections, by listener and principal (User:ANONYMOUS until a client authenticates).',
  labelNames: ['listener', 'principal'],
  registers: [r],
  collect() {
    const open = new Map<string, { listener: string; principal: string; n: number }>();
    for (const source of sources) {
      source.forEachConnection((listener, principal) => {
        const key = `${listener}\u0000${principal}`;
        const entry = open.get(key);
        if (entry) entry.n++;
        else open.set(key, { listener, principal, n: 1 });
      });
    }
    this.reset();
    for (const { listener, principal, n } of open.values()) this.set({ listener, principal }, n);
  },
});
