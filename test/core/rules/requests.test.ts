import { describe, expect, it } from 'vitest';
import { checkAckRequest, checkAppendRequest, checkPopRequest, checkReadRequest, requirePartitionRefs } from '../../../src/core/rules/requests.js';

describe('request shapes every engine checks before storage', () => {
  it('partition references need a valid queue name and an index', () => {
    expect(requirePartitionRefs([{ queue: 'orders', partition: 0 }])).toEqual([{ queue: 'orders', partition: 0 }]);
    expect(() => requirePartitionRefs([{ queue: 'orders', partition: -1 }])).toThrow('partitions[0].partition must be zero or more; got -1.');
    expect(() => requirePartitionRefs([{ queue: '', partition: 0 }])).toThrow(/queue name/i);
    expect(() => requirePartitionRefs('orders')).toThrow('partitions must be an array; got "orders".');
  });

  it('an append carries Buffers of record batches and an optional non-empty request id', () => {
    const partitions = [{ queue: 'orders', partition: 0, records: Buffer.alloc(0) }];
    expect(checkAppendRequest({ partitions, requestId: 'r-1' })).toEqual({ partitions, requestId: 'r-1' });
    expect(() => checkAppendRequest({ partitions, requestId: '' })).toThrow('requestId must be a non-empty string when given.');
    expect(() => checkAppendRequest({ partitions: [{ queue: 'orders', partition: 0, records: 'bytes' as never }] })).toThrow('partitions[0].records must be a Buffer of record batches.');
    expect(() => checkAppendRequest({ partitions, recordsHandedOver: 'yes' as never })).toThrow('recordsHandedOver must be true or false when given.');
  });

  it('a read names its isolation level and bounded sizes', () => {
    const req = { partitions: [{ queue: 'orders', partition: 0, fetchOffset: 5, maxBytes: 1024 }], minBytes: 1, maxWaitMs: 500, maxBytes: 4096, isolation: 'read_committed' as const };
    expect(checkReadRequest(req)).toMatchObject({ minBytes: 1, maxWaitMs: 500, maxBytes: 4096, isolation: 'read_committed' });
    expect(() => checkReadRequest({ ...req, isolation: 'committed' as never })).toThrow('isolation must be "read_uncommitted" or "read_committed"; got "committed".');
    expect(() => checkReadRequest({ ...req, partitions: [{ ...req.partitions[0]!, fetchOffset: -3 }] })).toThrow('partitions[0].fetchOffset must be zero or more; got -3.');
    expect(() => checkReadRequest({ ...req, maxWaitMs: -1 })).toThrow('maxWaitMs must be zero or more; got -1.');
  });

  it('a pop names its worker and a batch of 1 to 10,000', () => {
    const req = { queue: 'orders', consumerGroup: 'g', owner: 'worker-1', batch: 10, waitMs: 0 };
    expect(checkPopRequest(req)).toEqual({ partitionName: undefined, group: 'g', batch: 10, waitMs: 0, leaseMs: undefined });
    expect(checkPopRequest({ ...req, partition: 'eu', leaseMs: 500 })).toMatchObject({ partitionName: 'eu', leaseMs: 500 });
    expect(() => checkPopRequest({ ...req, owner: '' })).toThrow(/owner must be a non-empty string/);
    expect(() => checkPopRequest({ ...req, batch: 10_001 })).toThrow('batch must be at most 10000; got 10001.');
    expect(() => checkPopRequest({ ...req, leaseMs: 0 })).toThrow('leaseMs must be at least 1; got 0.');
  });

  it('an ack is completed or failed, at an offset', () => {
    const req = { queue: 'orders', partition: 'Default', consumerGroup: 'g', offset: 3, status: 'completed' as const };
    expect(checkAckRequest(req)).toEqual({ partitionName: 'Default', group: 'g' });
    expect(() => checkAckRequest({ ...req, status: 'done' as never })).toThrow('status must be "completed" or "failed"; got "done".');
    expect(() => checkAckRequest({ ...req, offset: 1.5 })).toThrow('offset must be an integer; got 1.5.');
  });
});
