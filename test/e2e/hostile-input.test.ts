/**
 * Hostile bytes on one connection must cost that connection only: each case
 * below opens a raw socket, proves it works with an ApiVersions round trip,
 * sends something malformed, and expects the gateway to close it and log why,
 * while a librdkafka producer on its own connection streams records through
 * all of it. At the end every one of the producer's records must be there,
 * exactly once and in order, and no other connection may have been closed
 * for a fault.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Producer } from '@confluentinc/kafka-javascript';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type LogEntry, type RunningGateway } from '../support/gateway.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type SentRecord } from '../support/records.js';
import { connectProducer, disconnect, expectDelivered, expectStoredCount, produceAll, readRecords, type Delivery } from '../support/rdkafka.js';
import { frame, RawConnection, requestFrameBytes, requestHeaderBytes } from '../support/raw-connection.js';
import { waitFor } from '../support/eventually.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const API_VERSIONS = 18;
const METADATA = 3;
const PRODUCE = 0;
const WARN = 40;

interface HostileCase {
  name: string;
  bytes: () => Buffer;
  /** What the logged reason must say, when the case determines it. */
  reason?: RegExp;
  /** Also half-close the socket after writing (a client that gives up mid-frame). */
  hangUp?: boolean;
  /** The log level the close must be logged at, at least. */
  level?: number;
}

function metadataFrame(): Buffer {
  return requestFrameBytes(METADATA, 4, { topics: [{ name: 'some-topic' }], allowAutoTopicCreation: false });
}

const CASES: HostileCase[] = [
  {
    name: 'an enormous length (2 GiB, far above the maximum frame)',
    bytes: () => Buffer.concat([frame(Buffer.alloc(0), 0x7fff_ffff), randomBytes(64)]),
    reason: /frame|size|large|exceed|maximum|limit/i,
    level: WARN,
  },
  {
    name: 'a negative length',
    bytes: () => Buffer.concat([frame(Buffer.alloc(0), -1), randomBytes(16)]),
    level: WARN,
  },
  {
    name: 'garbage after a plausible length',
    // The header's key is forced to something no Kafka version defines, the rest is random.
    bytes: () => {
      const body = randomBytes(200);
      body.writeInt16BE(31_000, 0);
      return frame(body);
    },
    level: WARN,
  },
  {
    name: 'a Produce header followed by garbage',
    bytes: () => frame(Buffer.concat([requestHeaderBytes(PRODUCE, 7, 5), randomBytes(300)])),
    level: WARN,
  },
  {
    name: 'a truncated frame (its size covers only part of a Metadata request)',
    bytes: () => {
      const whole = metadataFrame();
      const body = whole.subarray(4, whole.length - 9);
      return frame(body);
    },
    level: WARN,
  },
  {
    name: 'a frame cut off mid-way, then the client hangs up',
    bytes: () => {
      const whole = metadataFrame();
      return whole.subarray(0, whole.length - 9);
    },
    hangUp: true,
  },
  {
    name: 'a request for an unknown API key',
    bytes: () => frame(requestHeaderBytes(4242, 0, 7)),
    reason: /4242/,
    level: WARN,
  },
  {
    name: 'a request for a version of Metadata no Kafka has',
    bytes: () => frame(Buffer.concat([requestHeaderBytes(METADATA, 999, 8), Buffer.alloc(8)])),
    reason: /999/,
    level: WARN,
  },
];

/** The gateway's log entries about the connection from this local port. */
function entriesFor(gateway: RunningGateway, localPort: number): LogEntry[] {
  return gateway.logs.entries.filter((e) => JSON.stringify(e).includes(`127.0.0.1:${localPort}"`));
}

function closeEntry(gateway: RunningGateway, localPort: number): LogEntry | undefined {
  return entriesFor(gateway, localPort).find((e) => /closed/i.test(String(e.msg ?? '')));
}

for (const engine of engines) {
  const title = `hostile input on one connection, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let producer: Producer;
    const topic = uniqueTopic('hostile-neighbour');
    const hostilePorts = new Set<number>();
    const sent: SentRecord[] = [];
    const inFlight: Promise<Delivery[]>[] = [];
    const PER_ROUND = 250;

    /** Queues another round of the neighbour's records and returns without waiting for them. */
    function produceRound(): void {
      const round: SentRecord[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const seq = sent.length + round.length;
        round.push({ partition: seq % 2, key: `k${seq}`, value: sequencedValue(topic, seq), headers: [], timestamp: Date.now() });
      }
      sent.push(...round);
      inFlight.push(produceAll(producer, topic, round));
    }

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), autoCreateTopics: true, defaultPartitions: 2 });
      producer = await connectProducer(gateway.bootstrap, { acks: 'all', 'linger.ms': 2 }, topic);
      produceRound();
      // The neighbour is connected and has delivered before the first attack.
      await inFlight[0];
    });
    afterAll(async () => {
      if (producer) await disconnect(producer);
      await gateway?.stop();
    });

    it.each(CASES)('$name: closes that connection with a logged reason', async (hostile) => {
      produceRound();
      const raw = await RawConnection.open(gateway.port);
      hostilePorts.add(raw.localPort);
      try {
        const versions = await raw.request(API_VERSIONS, 3, { clientSoftwareName: 'queen-e2e', clientSoftwareVersion: '1' });
        expect(versions.errorCode, 'ApiVersions on the raw connection before the attack').toBe(0);

        raw.write(hostile.bytes());
        if (hostile.hangUp) raw.end();
        await raw.expectClosed(10_000, `${hostile.name}`);

        await waitFor(() => closeEntry(gateway, raw.localPort) !== undefined, {
          what: `a log line saying why the connection from port ${raw.localPort} was closed`,
          timeoutMs: 5_000,
          describe: () => `its log lines: ${JSON.stringify(entriesFor(gateway, raw.localPort))}`,
        });
        const entry = closeEntry(gateway, raw.localPort)!;
        const reason = String(entry['reason'] ?? entry.msg ?? '');
        expect(reason.length, `the close was logged without a reason: ${JSON.stringify(entry)}`).toBeGreaterThan(0);
        if (hostile.reason) expect(reason, `the logged reason: ${JSON.stringify(entry)}`).toMatch(hostile.reason);
        if (hostile.level) expect(entry.level, `a protocol violation is logged at warn level: ${JSON.stringify(entry)}`).toBeGreaterThanOrEqual(hostile.level);
      } finally {
        raw.destroy();
      }
      // The gateway still answers a fresh connection.
      const fresh = await RawConnection.open(gateway.port);
      try {
        expect((await fresh.request(API_VERSIONS, 3, { clientSoftwareName: 'queen-e2e', clientSoftwareVersion: '1' })).errorCode).toBe(0);
      } finally {
        fresh.destroy();
      }
    });

    it('the producer on another connection was unaffected: every record arrived exactly once, in order', async () => {
      const deliveries = (await Promise.all(inFlight)).flat();
      expectDelivered(deliveries);
      const read = await readRecords(gateway.bootstrap, topic, { partitions: [0, 1], count: sent.length });
      expectExactlyOnceInOrder(topic, sent.length, read);
      await expectStoredCount(gateway.bootstrap, topic, [0, 1], sent.length);
      // Only the hostile connections were closed for a fault.
      const faultCloses = gateway.logs.entries.filter(
        (e) => (e.level ?? 0) >= WARN && /closed/i.test(String(e.msg ?? '')) && ![...hostilePorts].some((p) => JSON.stringify(e).includes(`127.0.0.1:${p}"`)),
      );
      expect(faultCloses, 'connections other than the hostile ones were closed for a fault').toEqual([]);
    });
  });
}
