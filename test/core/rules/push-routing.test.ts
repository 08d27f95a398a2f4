import { describe, expect, it } from 'vitest';
import type { PartitionInfo } from '../../../src/core/core.js';
import { queuesToRoute, routePushItems } from '../../../src/core/rules/push-routing.js';

const topic: PartitionInfo[] = ['0', '1', '2'].map((name, index) => ({ name, index }) as PartitionInfo);
const fixed = (queue: string) => (queue === 'topic' ? topic : undefined);

describe('native pushes into a Kafka topic', () => {
  it('sends an item naming no partition (or "Default") to one of the topic\'s partitions, the same one for the same id', () => {
    const routed = routePushItems(
      [
        { queue: 'topic', transactionId: 'order-7', payload: 1 },
        { queue: 'topic', partition: 'Default', transactionId: 'order-7', payload: 2 },
      ],
      fixed,
    );
    expect(['0', '1', '2']).toContain(routed[0]!.partition);
    expect(routed[1]!.partition).toBe(routed[0]!.partition);
    const spread = new Set(Array.from({ length: 60 }, (_, i) => routePushItems<{ queue: string; partition?: string; transactionId: string; payload: number }[]>([{ queue: 'topic', transactionId: `id-${i}`, payload: i }], fixed)[0]!.partition));
    expect(spread.size).toBe(3);
  });

  it('keeps a partition the topic has, and refuses one it lacks with a sentence saying why', () => {
    expect(routePushItems([{ queue: 'topic', partition: '2', payload: 1 }], fixed)[0]!.partition).toBe('2');
    expect(() => routePushItems([{ queue: 'topic', partition: 'eu', payload: 1 }], fixed)).toThrow(/Kafka topic with 3 partitions \("0" to "2"\); a push cannot add partition "eu"/);
  });

  it('leaves Queen\'s own queues, non-push operations and malformed items untouched', () => {
    const ops = [{ queue: 'orders', payload: 1 }, { op: 'kv.put', ns: 'a', key: 'b', value: 1 }, null, { queue: 5 }];
    expect(routePushItems(ops, fixed)).toEqual(ops);
    expect(routePushItems('not a list', fixed)).toBe('not a list');
  });

  it('names the queues whose partitions routing needs, once each', () => {
    expect(queuesToRoute([{ queue: 'topic' }, { op: 'push', queue: 'topic' }, { op: 'ack', queue: 'other' }, { queue: 'orders' }])).toEqual(['topic', 'orders']);
    expect(queuesToRoute(undefined)).toEqual([]);
  });
});
