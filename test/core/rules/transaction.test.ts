import { describe, expect, it } from 'vitest';
import type { KvEntry } from '../../../src/core/core.js';
import { evaluateKvOperations, firstStoredDuplicate, firstUnheldAck, planTransaction } from '../../../src/core/rules/transaction.js';

const ack = (offset: number, required?: boolean) => ({ op: 'ack' as const, queue: 'in', partition: 'Default', consumerGroup: 'g', offset, status: 'completed' as const, ...(required === undefined ? {} : { required }) });

describe('planning a native transaction', () => {
  it('sorts the operations into pushes, acks and KV, remembering each one\'s index', () => {
    const plan = planTransaction(
      {
        operations: [
          { op: 'kv.put', ns: 'app', key: 'a', value: 1 },
          { op: 'push', queue: 'out', partition: 'Default', transactionId: 't1', payload: 'x' },
          ack(4, true),
          { op: 'push', ifStored: 'answer', queue: 'out', partition: 'Default', transactionId: 't2', payload: 'y' },
        ],
      },
      0,
    );
    expect(plan.operationCount).toBe(4);
    expect(plan.opIndexOfItem).toEqual([1, 3]);
    expect([...plan.answerStored]).toEqual([1]);
    expect(plan.acks).toEqual([{ opIndex: 2, ack: { queue: 'in', partition: 'Default', consumerGroup: 'g', offset: 4, status: 'completed' }, required: true }]);
    expect(plan.kv.map((k) => k.opIndex)).toEqual([0]);
  });

  it('refuses a bad operation before anything, naming it by its index in the request', () => {
    expect(() => planTransaction({ operations: [{ op: 'kv.put', ns: 'a', key: 'b', value: 1 }, { op: 'drop' }] }, 0)).toThrow(/operations\[1\]\.op "drop" is not one of push, ack/);
    expect(() => planTransaction({ operations: [ack(1), { ...ack(2), status: 'maybe' }] }, 0)).toThrow('operations[1].status must be "completed" or "failed"; got "maybe".');
    expect(() => planTransaction({ operations: [{ ...ack(2), required: 'yes' }] }, 0)).toThrow('operations[0].required must be true or false; got "yes".');
    expect(() => planTransaction({ operations: [{ op: 'kv.put', ns: 'a', key: 'b', value: 1 }, { op: 'push', queue: 'q', partition: 'Default', payload: undefined }] }, 0)).toThrow(/operations\[1\]/);
    expect(() => planTransaction({ operations: 'all of them' }, 0)).toThrow('operations must be an array; got "all of them".');
  });

  it('rolls back on the first stored id in operation order, except items that ask for a duplicate answer', () => {
    const plan = planTransaction(
      {
        operations: [
          { op: 'push', ifStored: 'answer', queue: 'out', partition: 'Default', transactionId: 'seen-1', payload: 1 },
          { op: 'push', queue: 'out', partition: 'Default', transactionId: 'new', payload: 2 },
          { op: 'push', queue: 'out', partition: 'Default', transactionId: 'seen-2', payload: 3 },
        ],
      },
      0,
    );
    const stored = new Set(['seen-1', 'seen-2']);
    const result = firstStoredDuplicate(plan, (item) => (stored.has(item.transactionId) ? { messageId: `m-${item.transactionId}`, offset: 9 } : null) as never);
    expect(result).toMatchObject({ success: false, reason: 'duplicate', failedIndex: 2 });
    expect((result as { message: string }).message).toMatch(/transactionId "seen-2", which partition "Default" of queue "out" already stores \(message m-seen-2 at offset 9\)/);
    expect(firstStoredDuplicate(plan, () => null)).toBeNull();
  });

  it('rolls back on the first required ack its group does not hold; an optional one never does', () => {
    const plan = planTransaction({ operations: [ack(1), ack(2, true), ack(3, true)] }, 0);
    expect(firstUnheldAck(plan, () => false)).toMatchObject({ success: false, reason: 'not_acked', failedIndex: 1 });
    expect(firstUnheldAck(plan, (i) => i !== 2)).toMatchObject({ failedIndex: 2 });
    expect(firstUnheldAck(plan, (i) => i !== 0)).toBeNull();
  });

  it('runs KV operations in order, each seeing the ones before it, and stops at a required precondition', () => {
    const stored: Record<string, KvEntry> = { 'app\u0000gate': { ns: 'app', key: 'gate', value: true, version: 1, expiresAt: null } };
    const plan = planTransaction(
      {
        operations: [
          { op: 'kv.incr', ns: 'app', key: 'n', by: 2 },
          { op: 'kv.incr', ns: 'app', key: 'n', by: 3 },
          { op: 'kv.delete', ns: 'app', key: 'gate' },
          { op: 'once', ns: 'app', key: 'gate', lifetime: { forever: true } },
        ],
      },
      0,
    );
    const evaluation = evaluateKvOperations(plan.kv, (ns, key) => stored[`${ns}\u0000${key}`] ?? null, 0);
    expect(evaluation.ok).toBe(true);
    if (!evaluation.ok) return;
    expect(evaluation.results.get(1)).toMatchObject({ value: 5, version: 2 });
    expect(evaluation.results.get(2)).toEqual({ deleted: true });
    // The delete before it freed the gate, so the once wins.
    expect(evaluation.results.get(3)).toEqual({ won: true });

    const lost = planTransaction({ operations: [{ op: 'kv.put', ns: 'app', key: 'x', value: 1 }, { op: 'once', ns: 'app', key: 'gate', lifetime: { forever: true } }] }, 0);
    const refused = evaluateKvOperations(lost.kv, (ns, key) => stored[`${ns}\u0000${key}`] ?? null, 0);
    expect(refused).toMatchObject({ ok: false, result: { success: false, reason: 'kv_precondition', failedIndex: 1 } });
  });
});
