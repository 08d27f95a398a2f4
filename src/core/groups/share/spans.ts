/**
 * The offsets of stored batches as a share fetch acquires them: each batch's
 * first and last offset, and whether it holds records a consumer gets. Control
 * batches (transaction markers) do not; under read_committed neither do the
 * batches of an aborted transaction, found as Kafka's consumer finds them
 * (the read's aborted-transactions list, each producer's abort marker ending
 * its aborted run).
 */
import { BatchAttr, BatchPos, readBatchHeader } from '../../../../protocol/records/batch-header.js';
import type { AbortedTransaction } from '../../core.js';
import type { BatchSpan } from './partition-state.js';

/** The control record's type (0 abort, 1 commit) of a control batch: its first record's key is [version int16, type int16]. */
function controlType(batch: Buffer): number {
  let at = 61;
  const varint = (): number => {
    let shift = 0;
    let value = 0;
    for (;;) {
      const b = batch[at++]!;
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    return (value >>> 1) ^ -(value & 1);
  };
  varint(); // record length
  at += 1; // attributes
  varint(); // timestamp delta
  varint(); // offset delta
  const keyLength = varint();
  return keyLength >= 4 ? batch.readInt16BE(at + 2) : -1;
}

export function batchSpans(batches: Buffer[], aborted: AbortedTransaction[] | null): BatchSpan[] {
  const pending = [...(aborted ?? [])].sort((a, b) => a.firstOffset - b.firstOffset);
  const abortedProducers = new Set<number>();
  return batches.map((batch) => {
    const header = readBatchHeader(batch);
    const baseOffset = Number(header.baseOffset);
    const producerId = Number(header.producerId);
    const control = (header.attributes & BatchAttr.Control) !== 0;
    const transactional = (header.attributes & BatchAttr.Transactional) !== 0;
    while (pending.length > 0 && pending[0]!.firstOffset <= baseOffset + header.lastOffsetDelta) abortedProducers.add(pending.shift()!.producerId);
    let skip = control;
    if (aborted !== null && transactional) {
      if (control && controlType(batch) === 0) abortedProducers.delete(producerId);
      else if (!control && abortedProducers.has(producerId)) skip = true;
    }
    return { baseOffset, lastOffset: baseOffset + batch.readInt32BE(BatchPos.LastOffsetDelta), control: skip };
  });
}
