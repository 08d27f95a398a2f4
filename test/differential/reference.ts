/**
 * Apache Kafka as the differential files' reference: one broker per test
 * file (test/support/apache-kafka.ts), with Kafka's defaults except the
 * initial rebalance delay (0, as the gateways here are started with).
 */
import { startApacheKafka } from '../support/apache-kafka.js';
import type { ReferenceBroker } from './targets.js';

export async function startReferenceKafka(): Promise<ReferenceBroker> {
  const kafka = await startApacheKafka({ autoCreateTopics: true, initialRebalanceDelayMs: 0 });
  return {
    target: { name: 'kafka', bootstrap: kafka.bootstrap, host: kafka.host, port: kafka.port, nodeId: kafka.nodeId },
    stop: () => kafka.stop(),
  };
}
