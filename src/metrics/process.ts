import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The one registry of this process: every series the process keeps whatever
 * it serves (Kafka requests, connections, the RPC, PostgreSQL, Node itself).
 * Each front door that answers /metrics writes it out, followed by what only
 * that door knows (the HTTP API's counters, figures read from the core at
 * scrape time): see ./exposition.ts.
 *
 * Node's own series (CPU, resident memory, heap, event-loop lag, GC, open
 * file descriptors) are prom-client's collectDefaultMetrics, under the names
 * every Node dashboard already uses (process_*, nodejs_*).
 */
export const processRegistry = new Registry();

collectDefaultMetrics({ register: processRegistry });

export const CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The process's series and then each extra registry's, as one Prometheus text exposition. */
export async function exposition(...extra: Registry[]): Promise<string> {
  const parts = await Promise.all([processRegistry, ...extra].map((r) => r.metrics()));
  return parts.filter((p) => p.trim() !== '').join('\n');
}
