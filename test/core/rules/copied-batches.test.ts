import { describe, expect, it } from 'vitest';
import { readBatchHeader } from '../../../protocol/records/batch-header.js';
import { CompressionCodec } from '../../../protocol/records/compression.js';
import { buildBatch, buildControlBatch, ControlRecordType, decodeBatch, validateBatches } from '../../../protocol/records/record-batch.js';
import { DEFAULT_APPEND_LIMITS, PARTITION_LEADER_EPOCH } from '../../../src/core/rules/batches.js';
import { checkAppendAtRequest, gapBatch, parseCopies, planCopy, storedCopy, type ParsedCopy } from '../../../src/core/rules/copied-batches.js';

const copy = (records: Buffer, endOffset?: number): ParsedCopy => parseCopies([{ queue: 'q', partition: 0, records, ...(endOffset === undefined ? {} : { endOffset }) }], DEFAULT_APPEND_LIMITS)[0]!;
const ok = (parsed: ParsedCopy) => {
  if (!parsed.ok) throw new Error(`expected the copy to be taken: ${parsed.message}`);
  return parsed;
};

describe('copied batches (appendAt)', () => {
  it('checks the request shape: records a Buffer, an endOffset a non-negative integer, and at least one of them', () => {
    expect(checkAppendAtRequest({ partitions: [{ queue: 'q', partition: 0, records: Buffer.alloc(0), endOffset: 3 }] })).toHaveLength(1);
    expect(() => checkAppendAtRequest({ partitions: [{ queue: 'q', partition: 0, records: 'abc' as never }] })).toThrow(/partitions\[0\]\.records must be a Buffer/);
    expect(() => checkAppendAtRequest({ partitions: [{ queue: 'q', partition: 0, records: Buffer.alloc(0) }] })).toThrow(/neither records nor an endOffset/);
    expect(() => checkAppendAtRequest({ partitions: [{ queue: 'q', partition: 0, records: Buffer.alloc(0), endOffset: -1 }] })).toThrow(/endOffset/);
  });

  it('takes batches at their own offsets with the gaps compaction leaves, inside and between batches', () => {
    const first = buildBatch({ baseOffset: 10, records: [{ value: 'a', offsetDelta: 0 }, { value: 'b', offsetDelta: 4 }] });
    const second = buildBatch({ baseOffset: 20, compression: CompressionCodec.Gzip, records: [{ value: 'c', timestamp: 5_000 }] });
    const parsed = ok(copy(Buffer.concat([first, second])));
    expect(parsed.batches.map((b) => [b.baseOffset, b.nextOffset])).toEqual([[10, 15], [20, 21]]);
    expect(parsed.batches[1]!.maxTimestamp).toBe(5_000);
    expect(parsed.endOffset).toBe(21);
    expect(ok(copy(first, 30)).endOffset).toBe(30);
  });

  it('takes transaction markers as copied batches, refuses other control batches, overlapping or backwards batches and corrupt bytes, naming the batch', () => {
    const marker = buildControlBatch({ type: ControlRecordType.Abort, producerId: 7, producerEpoch: 0, coordinatorEpoch: 0, baseOffset: 3 });
    expect(ok(copy(marker)).batches.map((b) => b.txn)).toEqual([{ kind: 'marker', producerId: 7, commit: false }]);
    const stray = buildBatch({ baseOffset: 3, isControl: true, records: [{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]) }] });
    const refused = copy(stray);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toBe('invalid_record');
    expect(!refused.ok && refused.message).toMatch(/batch 0 is a control batch without a transactional producer id/);

    const a = buildBatch({ baseOffset: 10, records: [{ value: 'a' }, { value: 'b' }] });
    const overlapping = copy(Buffer.concat([a, buildBatch({ baseOffset: 11, records: [{ value: 'c' }] })]));
    expect(!overlapping.ok && overlapping.error).toBe('corrupt_message');
    expect(!overlapping.ok && overlapping.message).toMatch(/batch 1 starts at offset 11, before the end \(12\)/);

    const flipped = Buffer.from(a);
    flipped[flipped.length - 1]! ^= 0xff;
    const corrupt = copy(flipped);
    expect(!corrupt.ok && corrupt.error).toBe('corrupt_message');
    expect(!corrupt.ok && corrupt.message).toMatch(/Nothing of this partition's records was stored/);
  });

  it('writes nothing when the first offset is below the partition\'s next offset, so a repeated copy is never stored twice', () => {
    const parsed = ok(copy(buildBatch({ baseOffset: 10, records: [{ value: 'a' }] })));
    const again = planCopy(parsed, 11);
    expect(again.kind).toBe('already_there');
    expect(again.kind === 'already_there' && again.message).toMatch(/Continue from offset 11/);
    expect(planCopy(parsed, 10)).toEqual({ kind: 'write', nextOffset: 11, trailingGap: null });
    // Source offsets may start past the target's end (retention on the source): the hole is left as it is.
    expect(planCopy(parsed, 4)).toEqual({ kind: 'write', nextOffset: 11, trailingGap: null });
  });

  it('turns an endOffset past the last record into a trailing gap batch a consumer reads past', () => {
    const parsed = ok(copy(buildBatch({ baseOffset: 0, records: [{ value: 'a' }] }), 5));
    const plan = planCopy(parsed, 0);
    expect(plan.kind === 'write' && plan.nextOffset).toBe(5);
    const gap = plan.kind === 'write' ? plan.trailingGap! : null;
    expect(gap && [gap.baseOffset, gap.nextOffset]).toEqual([1, 5]);
    const bytes = gapBatch(gap!);
    // A valid batch (CRC and framing as a broker checks them) with no records spanning offsets 1-4.
    const [valid] = validateBatches(bytes, { fromClient: false });
    expect(valid!.header.baseOffset).toBe(1n);
    expect(valid!.header.lastOffsetDelta).toBe(3);
    expect(decodeBatch(bytes).records).toHaveLength(0);
    expect(planCopy(ok(copy(Buffer.alloc(0), 7)), 7)).toEqual({ kind: 'write', nextOffset: 7, trailingGap: null });
  });

  it('stores a copy with this log\'s leader epoch and the source\'s offsets and bytes otherwise (CRC still valid)', () => {
    const source = buildBatch({ baseOffset: 42, partitionLeaderEpoch: 9, records: [{ key: 'k', value: 'v' }] });
    const parsed = ok(copy(source));
    const stored = storedCopy(source, parsed.batches[0]!);
    expect(readBatchHeader(stored).partitionLeaderEpoch).toBe(PARTITION_LEADER_EPOCH);
    expect(readBatchHeader(stored).baseOffset).toBe(42n);
    expect(readBatchHeader(source).partitionLeaderEpoch).toBe(9);
    expect(() => validateBatches(stored, { fromClient: false })).not.toThrow();
    expect(stored.subarray(12 + 4)).toEqual(source.subarray(12 + 4));
  });
});
