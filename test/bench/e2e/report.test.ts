/**
 * The benchmark's comparison with Apache Kafka: which offered load the
 * latency phases share, and the gateway ÷ Kafka ratios and targets. The
 * figures are those of the committed quick run (librdkafka, 100 B, 8
 * partitions), rounded.
 */
import { describe, expect, it } from 'vitest';
import { evaluateTargets, halfMaximum, sharedLatencyRate, versusKafka } from './report.js';
import type { BrokerFigures, ConfigurationResult } from './run.js';

function phase(recordsPerSecond: number, brokerMicrosPerRecord: number) {
  return { recordsPerSecond, megabytesPerSecond: recordsPerSecond / 1e4, brokerCores: (recordsPerSecond * brokerMicrosPerRecord) / 1e6, brokerMicrosPerRecord };
}

function broker(produce: number, cpu: number, consume: number, endToEnd: number, peakMemoryMB: number, latency?: { rate: number; p50: number; p99: number }): BrokerFigures {
  return {
    produce: { ...phase(produce, cpu), acked: produce * 4, failed: 0 },
    consume: { ...phase(consume, cpu / 2), records: consume * 4 },
    endToEnd: { produced: endToEnd * 3, delivered: endToEnd, recordsPerSecond: endToEnd },
    peakMemoryMB,
    latency: latency && { offeredRate: latency.rate, achievedRate: latency.rate, measured: 15_000, p50: latency.p50, p99: latency.p99, p999: latency.p99, max: latency.p99, brokerCores: 0.1 },
  };
}

function configuration(brokers: ConfigurationResult['brokers']): ConfigurationResult {
  return { client: 'rdkafka', recordBytes: 100, partitions: 8, latency: true, label: 'rdkafka 100 B 8p', brokers };
}

const measured = () =>
  configuration({
    null: { produce: { ...phase(173_841, 0.42), acked: 1, failed: 0 } },
    mock: broker(777_756, 0.05, 47_490, 15_254, 112),
    kafka: broker(86_933, 1.27, 39_601, 11_096, 334),
    memory: broker(194_331, 0.56, 82_368, 23_399, 350),
    postgres: broker(155_368, 0.86, 71_090, 14_511, 172),
  });

describe('the latency load Kafka and both engines share', () => {
  it('is half the lowest end-to-end maximum of Kafka and the two engines, whatever the mock or the null broker did', () => {
    expect(sharedLatencyRate(measured())).toBe(5_548);
  });

  it('comes from the engine when it is the slowest of the three', () => {
    const result = measured();
    result.brokers.postgres!.endToEnd!.recordsPerSecond = 9_000;
    expect(sharedLatencyRate(result)).toBe(4_500);
  });

  it('falls back to the lower of produce and consume for a broker whose end-to-end phase has no figure', () => {
    const figures = broker(86_933, 1.27, 39_601, 11_096, 334);
    delete figures.endToEnd;
    expect(halfMaximum(figures)).toBe(19_801);
    expect(halfMaximum({})).toBeUndefined();
  });
});

describe('gateway ÷ Apache Kafka', () => {
  it('divides each engine figure by Kafka\'s: throughput, latency at the same load, CPU per record produced, peak memory', () => {
    const result = measured();
    result.brokers.kafka!.latency = broker(0, 0, 0, 0, 0, { rate: 5_548, p50: 204.5, p99: 356.0 }).latency;
    result.brokers.memory!.latency = broker(0, 0, 0, 0, 0, { rate: 5_548, p50: 5.8, p99: 13.1 }).latency;
    const memory = versusKafka(result)!.memory!;
    expect(memory.produce).toBeCloseTo(194_331 / 86_933, 6);
    expect(memory.consume).toBeCloseTo(82_368 / 39_601, 6);
    expect(memory.endToEnd).toBeCloseTo(23_399 / 11_096, 6);
    expect(memory.p50).toBeCloseTo(5.8 / 204.5, 6);
    expect(memory.p99).toBeCloseTo(13.1 / 356.0, 6);
    expect(memory.produceMicrosPerRecord).toBeCloseTo(0.56 / 1.27, 6);
    expect(memory.peakMemory).toBeCloseTo(350 / 334, 6);
  });

  it('compares no latency measured at different offered loads', () => {
    const result = measured();
    result.brokers.kafka!.latency = broker(0, 0, 0, 0, 0, { rate: 5_548, p50: 204.5, p99: 356.0 }).latency;
    result.brokers.postgres!.latency = broker(0, 0, 0, 0, 0, { rate: 7_255, p50: 19.4, p99: 77.2 }).latency;
    const postgres = versusKafka(result)!.postgres!;
    expect(postgres.p50).toBeUndefined();
    expect(postgres.p99).toBeUndefined();
    expect(postgres.produce).toBeCloseTo(155_368 / 86_933, 6);
  });

  it('has nothing to say without a Kafka row', () => {
    const result = measured();
    delete result.brokers.kafka;
    expect(versusKafka(result)).toBeUndefined();
  });

  it('judges the targets against Kafka, met and short', () => {
    const result = measured();
    result.brokers.kafka!.produce!.recordsPerSecond = 400_000;
    result.versusKafka = versusKafka(result);
    const judged = evaluateTargets([result]).filter((t) => t.target.includes('Apache Kafka'));
    expect(judged.map((t) => [t.target, t.figure, t.pass])).toEqual([
      ["memory engine produce ≥ Apache Kafka's", '0.49x', false],
      ["memory engine consume ≥ Apache Kafka's", '2.08x', true],
      ["memory engine end-to-end maximum ≥ Apache Kafka's", '2.11x', true],
      ["memory engine CPU per record produced ≤ Apache Kafka's broker process's", '0.44x', true],
      ["postgres engine CPU per record produced ≤ Apache Kafka's broker process's", '0.68x', true],
      ["postgres engine produce ≥ 0.7x Apache Kafka's", '0.39x', false],
      ["postgres engine consume ≥ 0.7x Apache Kafka's", '1.80x', true],
    ]);
  });

  it('holds the durable engines, alone and with a synchronous standby, to a p99 under 50 ms at 64 partitions', () => {
    const result = { ...measured(), partitions: 64, label: 'rdkafka 100 B 64p' };
    result.brokers.kafka!.latency = broker(0, 0, 0, 0, 0, { rate: 5_000, p50: 20, p99: 90 }).latency;
    result.brokers.postgres!.latency = broker(0, 0, 0, 0, 0, { rate: 5_000, p50: 9, p99: 41.5 }).latency;
    result.brokers.standby = broker(60_000, 1.5, 30_000, 9_000, 180, { rate: 5_000, p50: 15, p99: 77.2 });
    result.versusKafka = versusKafka(result);
    const judged = evaluateTargets([result]).filter((t) => t.target.includes('50 ms') || t.target.includes('standby'));
    expect(judged.map((t) => [t.target, t.figure, t.pass])).toEqual([
      ["postgres engine with a sync standby CPU per record produced ≤ Apache Kafka's broker process's", '1.18x', false],
      ['postgres engine p99 end-to-end < 50 ms at 64 partitions at the shared load', '41.5 ms', true],
      ["postgres engine with a sync standby produce ≥ 0.7x Apache Kafka's", '0.69x', false],
      ["postgres engine with a sync standby consume ≥ 0.7x Apache Kafka's", '0.76x', true],
      ['postgres engine with a sync standby p99 end-to-end < 50 ms at 64 partitions at the shared load', '77.2 ms', false],
    ]);
  });
});
