/**
 * The librdkafka producer settings every throughput bench uses, so their
 * figures compare: acks=all, a 5 ms linger, batches as large as librdkafka
 * allows, no compression, delivery reports for failures only. Idempotence
 * and transactions are each bench's own choice, and so are statistics.
 */
export const FLAT_OUT_PRODUCER = {
  'client.id': 'queen-bench',
  'log_level': 3,
  'acks': 'all',
  'linger.ms': 5,
  'batch.size': 1_000_000,
  'batch.num.messages': 10_000,
  'compression.type': 'none',
  'dr_cb': true,
  'delivery.report.only.error': true,
} as const;
