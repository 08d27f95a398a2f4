import type { PartitionRef, ReadPartitionResult, ReadRequest, ReadResult } from '../core.js';

/**
 * Fetch's answers that do not depend on the engine: when a long-polling read
 * is ready, and the empty answer. Each engine collects the batches itself
 * (the read decides nothing else), then asks these.
 */

/**
 * Whether a read may answer now: at its deadline (`final`), on any error,
 * once it holds minBytes, or once it holds something and is at maxBytes.
 */
export function readIsReady(result: ReadResult, req: Pick<ReadRequest, 'minBytes' | 'maxBytes'>, final: boolean): boolean {
  const bytes = result.partitions.reduce((n, p) => n + p.batches.reduce((m, b) => m + b.length, 0), 0);
  const anyError = result.partitions.some((p) => p.error !== null);
  return final || anyError || bytes >= req.minBytes || (bytes > 0 && bytes >= req.maxBytes);
}

/** A partition's answer with nothing in it (offsets -1): for an error, or a core closing under a long-poll. */
export function emptyPartitionRead(p: PartitionRef): ReadPartitionResult {
  return { queue: p.queue, partition: p.partition, error: null, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, batches: [], abortedTransactions: [] };
}

export function emptyRead(parts: PartitionRef[]): ReadResult {
  return { partitions: parts.map(emptyPartitionRead) };
}
