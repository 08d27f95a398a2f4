/** Kafka record batches: RecordBatch v2, legacy message sets, CRCs and compression. */
export * from './batch-header.js';
export * from './compression.js';
export * from './crc32c.js';
export * from './legacy.js';
export * from './record-batch.js';
