/**
 * Reading Apache Kafka's perf tools (ProducerPerformance, ConsumerPerformance
 * 4.4.0): the lines below are what they printed against Apache Kafka on
 * loopback while the benchmark's perftest client was built.
 */
import { describe, expect, it } from 'vitest';
import { consumerFigures, parseConsumerProgress, parseProducerInterval, producerFigures } from './perf-tools.js';

const PRODUCER_OUTPUT = `Warmup first 300000 records. Steady state results will print after the complete test summary.
1 records sent, 0.5 records/sec (0.00 MB/sec), 1875.0 ms avg latency, 1875.0 ms max latency.
159302 records sent, 158825.5 records/sec (15.15 MB/sec), 42.0 ms avg latency, 482.0 ms max latency.
In steady state.
289802 records sent, 269583.3 records/sec (25.71 MB/sec), 24.1 ms avg latency, 387.0 ms max latency.
1500000 records sent, 215734.215447 records/sec (20.57 MB/sec), 92.91 ms avg latency, 1875.00 ms max latency, 55 ms 50th, 302 ms 95th, 376 ms 99th, 399 ms 99.9th.
1200000 steady state records sent, 346420.323326 records/sec (33.04 MB/sec), 107.48 ms avg latency, 410.00 ms max latency, 78 ms 50th, 320 ms 95th, 385 ms 99th, 399 ms 99.9th.`;

const CONSUMER_OUTPUT = `time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-12-01 00:40:21:849, 0, 0.0001, 0.0000, 1, 0.2449, 3803, 280, 0.0003, 3.5714
2026-12-01 00:40:22:359, 0, 5.5750, 10.9312, 58458, 114621.5686, 0, 510, 10.9312, 114621.5686
2026-12-01 00:40:22:860, 0, 37.2029, 63.1296, 390101, 661962.0758, 0, 501, 63.1296, 661962.0758
2026-12-01 00:40:23:360, 0, 86.1053, 97.8048, 902880, 1025558.0000, 0, 500, 97.8048, 1025558.0000`;

const CONSUMER_SUMMARY = `start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-12-01 00:40:25:857, 2026-12-01 00:40:32:225, 143.0511, 22.4641, 1500000, 235552.7638, 3578, 2790, 51.2728, 537634.4086`;

describe('kafka-producer-perf-test output', () => {
  it('reads the interval lines and nothing else: not the banner, the steady-state marker or the two closing summaries', () => {
    const intervals = PRODUCER_OUTPUT.split('\n').map(parseProducerInterval);
    expect(intervals).toEqual([
      null,
      { records: 1, recordsPerSecond: 0.5 },
      { records: 159302, recordsPerSecond: 158825.5 },
      null,
      { records: 289802, recordsPerSecond: 269583.3 },
      null,
      null,
    ]);
  });

  it('counts the records of the intervals given over their summed lengths (records ÷ rate each)', () => {
    const intervals = [parseProducerInterval(PRODUCER_OUTPUT.split('\n')[2]!)!, parseProducerInterval(PRODUCER_OUTPUT.split('\n')[4]!)!];
    const { counted, seconds } = producerFigures(intervals);
    expect(counted).toBe(159302 + 289802);
    expect(seconds).toBeCloseTo(159302 / 158825.5 + 289802 / 269583.3, 6);
    expect(counted / seconds).toBeGreaterThan(158825.5);
    expect(counted / seconds).toBeLessThan(269583.3);
  });
});

describe('kafka-consumer-perf-test output', () => {
  it('reads the time and the records so far from each detailed line, not the header', () => {
    const lines = CONSUMER_OUTPUT.split('\n').map(parseConsumerProgress);
    expect(lines[0]).toBeNull();
    expect(lines.slice(1).map((l) => l?.records)).toEqual([1, 58458, 390101, 902880]);
    expect(lines[2]!.atMs - lines[1]!.atMs).toBe(510);
    expect(lines[4]!.atMs - lines[1]!.atMs).toBe(1511);
  });

  it('does not take the closing summary (start and end times) for a progress line', () => {
    expect(CONSUMER_SUMMARY.split('\n').map(parseConsumerProgress)).toEqual([null, null]);
  });

  it('rates the records after the first line over the time since it, as the other clients are counted', () => {
    const [first, , , last] = CONSUMER_OUTPUT.split('\n').slice(1).map((l) => parseConsumerProgress(l)!);
    const figures = consumerFigures(first!, last!);
    expect(figures.records).toBe(902880);
    expect(figures.seconds).toBe(1.511);
    expect(figures.recordsPerSecond).toBeCloseTo((902880 - 1) / 1.511, 3);
  });
});
