/**
 * The share-group benchmark's judgement and chart, on figures shaped like a
 * run's: the goals (share ≥ 0.7x the consumer group on the gateway, ≥ Kafka
 * 4.4's share groups) met and short, and the chart drawing every broker's
 * bars and the goals from the JSON alone.
 */
import { describe, expect, it } from 'vitest';
import { judge, renderShareChart, type ReadFigures, type ShareBenchResults, type ShareBrokerFigures } from './share-groups-report.js';

function read(recordsPerSecond: number, brokerMicrosPerRecord: number): ReadFigures {
  return { records: 100_000, seconds: 100_000 / recordsPerSecond, recordsPerSecond, firstRecordAfterMs: 3_000, brokerMicrosPerRecord };
}

function broker(group: number, share: number, p99: number, cpu: number): ShareBrokerFigures {
  return { groupRuns: [read(group, cpu)], shareRuns: [read(share, cpu)], group: read(group, cpu), share: read(share, cpu), redelivery: { redelivered: 2_000, p50: p99 / 2, p99, max: p99, wrongDeliveryCount: 0 } };
}

function results(): ShareBenchResults {
  return {
    startedAt: '2026-12-03T12:00:00.000Z',
    finishedAt: '2026-12-03T12:10:00.000Z',
    machine: { cpus: 2, model: 'test', loadAverageAfter: { kafka: [12, 10, 8], memory: [14, 11, 9], postgres: [15, 12, 9] }, node: 'v22' },
    settings: { records: 100_000, recordBytes: 100 },
    brokers: { kafka: broker(50_000, 10_000, 40, 20), memory: broker(60_000, 45_000, 20, 8), postgres: broker(30_000, 6_000, 150, 40) },
    judged: [],
  };
}

describe('the share-group benchmark\'s goals', () => {
  it('holds each gateway engine to 0.7x its consumer group and to Kafka\'s share groups, and shows the redelivery and CPU ratios', () => {
    const judged = judge(results()).map((j) => [j.what, j.figure, j.pass]);
    expect(judged).toEqual([
      ['Apache Kafka 4.4: share group ÷ consumer group, records/s', '0.20x', undefined],
      ['gateway, memory: share group ÷ consumer group, records/s (goal ≥ 0.7x)', '0.75x', true],
      ["gateway, memory: share group ÷ Kafka's share group, records/s (goal ≥ 1x)", '4.50x', true],
      ["gateway, memory: redelivery p99 ÷ Kafka's (below 1 is quicker)", '0.50x', undefined],
      ["gateway, memory: broker CPU per share record ÷ Kafka's (below 1 is cheaper)", '0.40x', undefined],
      ['gateway, PostgreSQL: share group ÷ consumer group, records/s (goal ≥ 0.7x)', '0.20x', false],
      ["gateway, PostgreSQL: share group ÷ Kafka's share group, records/s (goal ≥ 1x)", '0.60x', false],
      ["gateway, PostgreSQL: redelivery p99 ÷ Kafka's (below 1 is quicker)", '3.75x', undefined],
      ["gateway, PostgreSQL: broker CPU per share record ÷ Kafka's (below 1 is cheaper)", '2.00x', undefined],
    ]);
  });

  it('judges nothing against Kafka when Kafka failed, and the chart names the failure', () => {
    const r = results();
    r.brokers.kafka = { groupRuns: [], shareRuns: [], error: 'Kafka did not start' };
    r.judged = judge(r);
    expect(r.judged.filter((j) => j.what.includes('Kafka\'s'))).toEqual([]);
    expect(renderShareChart(r)).toContain('Apache Kafka 4.4 failed: Kafka did not start');
  });

  it('draws a bar per broker and kind, with the ratios and the goals, from the figures alone', () => {
    const r = results();
    r.judged = judge(r);
    const svg = renderShareChart(r);
    expect(svg.startsWith('<svg')).toBe(true);
    for (const label of ['Apache Kafka 4.4: group', 'gateway, memory: share', 'gateway, PostgreSQL: p99']) expect(svg).toContain(label);
    expect(svg).toContain('0.75× group, 4.50× Kafka share');
    expect(svg).toContain('SHORT 0.20x gateway, PostgreSQL: share group ÷ consumer group, records/s');
  });
});
