import { describe, expect, it } from 'vitest';
import { checkInitProducer, decideIdempotentInit, MAX_PRODUCER_EPOCH } from '../../../src/core/rules/init-producer.js';

describe('InitProducer requests', () => {
  it('ignores the transaction timeout of an idempotent producer (librdkafka sends -1 there)', () => {
    expect(checkInitProducer({ transactionalId: null, transactionTimeoutMs: -1, producerId: -1, producerEpoch: -1 })).toEqual({
      transactionalId: null,
      transactionTimeoutMs: 0,
      producerId: -1,
      producerEpoch: -1,
    });
  });

  it('checks a transactional producer\'s timeout, id and epoch', () => {
    expect(checkInitProducer({ transactionalId: 'tx-1', transactionTimeoutMs: 60_000, producerId: 7, producerEpoch: MAX_PRODUCER_EPOCH })).toMatchObject({ transactionTimeoutMs: 60_000, producerEpoch: MAX_PRODUCER_EPOCH });
    // A negative timeout passes here and is refused by the coordinator's INVALID_TRANSACTION_TIMEOUT check.
    expect(checkInitProducer({ transactionalId: 'tx-1', transactionTimeoutMs: -1, producerId: -1, producerEpoch: -1 })).toMatchObject({ transactionTimeoutMs: -1 });
    expect(() => checkInitProducer({ transactionalId: 'tx-1', transactionTimeoutMs: 2 ** 31, producerId: -1, producerEpoch: -1 })).toThrow(/transactionTimeoutMs must be at most 2147483647/);
    expect(() => checkInitProducer({ transactionalId: '', transactionTimeoutMs: 1, producerId: -1, producerEpoch: -1 })).toThrow('transactionalId must be null or a non-empty string.');
    expect(() => checkInitProducer({ transactionalId: null, transactionTimeoutMs: 0, producerId: -2, producerEpoch: -1 })).toThrow(/producerId must be at least -1/);
    expect(() => checkInitProducer({ transactionalId: null, transactionTimeoutMs: 0, producerId: 1, producerEpoch: MAX_PRODUCER_EPOCH + 1 })).toThrow(/producerEpoch must be at most 32767/);
  });
});

describe('InitProducerId without a transactional id', () => {
  it('bumps the epoch of a producer naming its own id and current epoch (KIP-360), and allocates a new id for anyone else', () => {
    expect(decideIdempotentInit({ producerId: -1, producerEpoch: -1 }, null)).toEqual({ kind: 'new' });
    expect(decideIdempotentInit({ producerId: 7, producerEpoch: 3 }, 3)).toEqual({ kind: 'bump', producerId: 7, producerEpoch: 4 });
    // An epoch that is not the recorded one, or an id never recorded, is another producer's: a new id.
    expect(decideIdempotentInit({ producerId: 7, producerEpoch: 2 }, 3)).toEqual({ kind: 'new' });
    expect(decideIdempotentInit({ producerId: 7, producerEpoch: 0 }, null)).toEqual({ kind: 'new' });
  });

  it('allocates a new id when the next epoch would pass the largest', () => {
    expect(decideIdempotentInit({ producerId: 7, producerEpoch: MAX_PRODUCER_EPOCH - 1 }, MAX_PRODUCER_EPOCH - 1)).toEqual({ kind: 'new' });
    expect(decideIdempotentInit({ producerId: 7, producerEpoch: MAX_PRODUCER_EPOCH - 2 }, MAX_PRODUCER_EPOCH - 2)).toEqual({ kind: 'bump', producerId: 7, producerEpoch: MAX_PRODUCER_EPOCH - 1 });
  });
});
