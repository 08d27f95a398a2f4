/**
 * Which stored batches retention removes. Both limits work on whole batches,
 * oldest first, like Kafka deleting whole segments: by time, a batch goes once
 * it was appended longer ago than retentionMs; by size, the oldest go while the
 * partition holds more than retentionBytes. The result is the new log start
 * offset, which never moves backwards.
 */

export interface RetainedBatchInfo {
  baseOffset: number;
  /** The offset after the batch's last record. */
  nextOffset: number;
  size: number;
  appendedAt: number;
}

export function retentionStartOffset(
  batches: readonly RetainedBatchInfo[],
  config: { retentionMs: number; retentionBytes: number },
  logStartOffset: number,
  nowMs: number,
): number {
  let start = logStartOffset;
  let bytes = batches.reduce((n, b) => n + b.size, 0);
  for (const batch of batches) {
    const tooOld = config.retentionMs >= 0 && nowMs - batch.appendedAt > config.retentionMs;
    const tooBig = config.retentionBytes >= 0 && bytes > config.retentionBytes;
    if (!tooOld && !tooBig) break;
    start = Math.max(start, batch.nextOffset);
    bytes -= batch.size;
  }
  return start;
}
