/**
 * Everywhere a client can make the gateway hold memory, over real sockets:
 * claimed frame sizes, many connections at once, bytes trickled in, too many
 * connections from one address, and the memory engine's size. Each case
 * checks what a user would see (connections answered, paused or closed, the
 * reason logged, the error a producer gets) and that the process's buffers
 * stay bounded.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startBroker, type Broker, type StartBrokerOptions } from '../../src/index.js';
import { frame, RawConnection, requestFrameBytes, requestHeaderBytes } from '../support/raw-connection.js';
import { LogCapture } from '../support/gateway.js';
import { connectKafkajsProducer, kafkajsClient } from '../support/kafkajs.js';
import { sleep, waitFor } from '../support/eventually.js';

const API_VERSIONS = 18;
const METADATA = 3;
const WARN = 40;
const MIB = 1024 * 1024;

const started: { broker: Broker; raws: RawConnection[] }[] = [];
afterEach(async () => {
  for (const { broker, raws } of started.splice(0)) {
    for (const raw of raws) raw.destroy();
    await broker.stop();
  }
});

async function brokerWithLogs(options: StartBrokerOptions = {}): Promise<{ broker: Broker; logs: LogCapture; raws: RawConnection[] }> {
  const logs = new LogCapture();
  const logger = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, done) => (logs.write(chunk.toString()), done()) }));
  const broker = await startBroker({ logger, shutdownGraceMs: 500, ...options });
  const entry = { broker, raws: [] as RawConnection[] };
  started.push(entry);
  return { broker, logs, raws: entry.raws };
}

async function apiVersionsAnswered(port: number): Promise<void> {
  const fresh = await RawConnection.open(port);
  try {
    expect((await fresh.request(API_VERSIONS, 3, { clientSoftwareName: 'bounds', clientSoftwareVersion: '1' })).errorCode).toBe(0);
  } finally {
    fresh.destroy();
  }
}

function sizePrefix(size: number): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(size);
  return prefix;
}

/** A Metadata v4 request of about `bytes` bytes: many long topic names (none exists). */
function bigMetadataFrame(bytes: number, correlationId: number): Buffer {
  const names = Array.from({ length: Math.ceil(bytes / 200) }, (_, i) => `t${i}-${'x'.repeat(190)}`);
  return requestFrameBytes(METADATA, 4, { topics: names.map((name) => ({ name })), allowAutoTopicCreation: false }, correlationId);
}

describe('frames and connections', () => {
  it('300 connections each claiming a 100 MiB frame cost the bytes that came, not the bytes claimed; others are still served', { timeout: 60_000 }, async () => {
    const { broker, raws } = await brokerWithLogs();
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 300; i++) {
      const raw = await RawConnection.open(broker.port);
      raws.push(raw);
      raw.write(Buffer.concat([sizePrefix(100 * MIB), Buffer.from('just ten b')]));
    }
    // Every claim has reached the gateway once a later connection is answered on the same event loop.
    await apiVersionsAnswered(broker.port);
    const grown = process.memoryUsage().arrayBuffers - before;
    // Allocating what was claimed would be 30 GB; what arrived is 300 x 14 bytes (plus sockets' own buffers).
    expect(grown, `array buffers grew by ${grown} bytes`).toBeLessThan(64 * MIB);
    expect(raws.every((r) => r.unreadFrames === 0)).toBe(true);
  });

  it('past the buffered-bytes cap a connection waits (is not refused) and is answered once room is made', { timeout: 30_000 }, async () => {
    const { broker, raws } = await brokerWithLogs({ limits: { maxFrameBytes: MIB, maxBufferedBytes: MIB } });
    // A holds room for 900 KiB it never sends.
    const a = await RawConnection.open(broker.port);
    raws.push(a);
    a.write(Buffer.concat([sizePrefix(900 * 1024), Buffer.alloc(100)]));
    await apiVersionsAnswered(broker.port);
    // B sends a real 300 KiB request: there is no room for it until A goes.
    const b = await RawConnection.open(broker.port);
    raws.push(b);
    const request = bigMetadataFrame(300 * 1024, 7);
    b.write(request.subarray(0, 1000));
    await sleep(200);
    b.write(request.subarray(1000));
    await sleep(1_000);
    expect(b.unreadFrames, 'B was answered while A held the room it needs').toBe(0);
    a.destroy();
    const answer = await b.readResponse(METADATA, 4, 10_000);
    expect(answer.correlationId).toBe(7);
    expect((answer.body.topics as unknown[]).length).toBeGreaterThan(1000);
  });

  it('a frame trickled in a byte at a time is closed at the frame deadline, though bytes keep coming', { timeout: 30_000 }, async () => {
    const { broker, logs, raws } = await brokerWithLogs({ limits: { frameTimeoutMs: 800, idleTimeoutMs: 60_000 } });
    const raw = await RawConnection.open(broker.port);
    raws.push(raw);
    const request = requestFrameBytes(METADATA, 4, { topics: [{ name: 'slowly' }], allowAutoTopicCreation: false });
    let sent = 0;
    const trickle = setInterval(() => {
      if (sent < request.length) raw.write(request.subarray(sent, ++sent));
    }, 50);
    try {
      await raw.expectClosed(10_000, 'a frame trickled a byte every 50 ms');
    } finally {
      clearInterval(trickle);
    }
    expect(sent, 'the connection closed before the trickled frame was complete').toBeLessThan(request.length);
    const entry = logs.entries.find((e) => /closed/.test(String(e.msg)) && JSON.stringify(e).includes(`:${raw.localPort}"`));
    expect(entry?.level).toBe(WARN);
    expect(String(entry?.['reason'])).toMatch(/did not arrive whole within 800 ms/);
    await apiVersionsAnswered(broker.port);
  });

  it('connections from one address past its cap are refused, logged once, and accepted again once one closes', { timeout: 30_000 }, async () => {
    const { broker, logs, raws } = await brokerWithLogs({ limits: { maxConnectionsPerIp: 3 } });
    for (let i = 0; i < 3; i++) raws.push(await RawConnection.open(broker.port));
    const refused = [await RawConnection.open(broker.port), await RawConnection.open(broker.port)];
    raws.push(...refused);
    for (const r of refused) await r.expectClosed(5_000, 'a fourth connection from 127.0.0.1 with a cap of 3');
    for (const r of raws.slice(0, 3)) {
      expect((await r.request(API_VERSIONS, 3, { clientSoftwareName: 'bounds', clientSoftwareVersion: '1' })).errorCode).toBe(0);
    }
    const lines = logs.entries.filter((e) => /maximum number of connections/.test(String(e.msg)));
    expect(lines, 'one line for the refusals while at the cap').toHaveLength(1);
    expect(lines[0]!.level).toBe(WARN);
    raws[0]!.destroy();
    await waitFor(async () => {
      const again = await RawConnection.open(broker.port);
      try {
        return (await again.request(API_VERSIONS, 3, { clientSoftwareName: 'bounds', clientSoftwareVersion: '1' }, 2_000)).errorCode === 0;
      } catch {
        return false;
      } finally {
        again.destroy();
      }
    }, { what: 'a new connection to be accepted once one of the three closed', timeoutMs: 10_000 });
  });

  it('a valid request followed by garbage in the same write is answered, then the connection closes, logged', { timeout: 30_000 }, async () => {
    const { broker, logs, raws } = await brokerWithLogs();
    const raw = await RawConnection.open(broker.port);
    raws.push(raw);
    const valid = requestFrameBytes(METADATA, 4, { topics: [{ name: 'before-garbage' }], allowAutoTopicCreation: false }, 41);
    const garbage = frame(Buffer.concat([requestHeaderBytes(31_000, 0, 42), Buffer.from('not a request at all')]));
    raw.write(Buffer.concat([valid, garbage]));
    const answer = await raw.readResponse(METADATA, 4);
    expect(answer.correlationId).toBe(41);
    expect((answer.body.topics as { name: string }[])[0]!.name).toBe('before-garbage');
    await raw.expectClosed(5_000, 'the garbage after the valid request');
    await waitFor(() => logs.entries.some((e) => /closed/.test(String(e.msg)) && JSON.stringify(e).includes(`:${raw.localPort}"`)), {
      what: 'the close to be logged',
      timeoutMs: 5_000,
    });
    const entry = logs.entries.find((e) => /closed/.test(String(e.msg)) && JSON.stringify(e).includes(`:${raw.localPort}"`))!;
    expect(entry.level).toBe(WARN);
    expect(String(entry['reason'])).toMatch(/31000/);
  });

  it('refuses a frame size above the cap the settings allow, before reading it', async () => {
    await expect(startBroker({ limits: { maxFrameBytes: 10 * MIB, maxBufferedBytes: MIB } })).rejects.toThrow(/maxBufferedBytes .* is below maxFrameBytes/);
  });
});

describe('the memory engine size limit', () => {
  it('refuses writes past the limit (records and KV entries) with POLICY_VIOLATION and HTTP 507, logs why once, and accepts again once a topic is deleted', { timeout: 60_000 }, async () => {
    const { broker, logs } = await brokerWithLogs({ memoryMaxBytes: 256 * 1024, http: { port: 0 }, autoCreateTopics: true });
    const kafka = kafkajsClient(broker.bootstrap, { retries: 2 });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'fills-up', numPartitions: 1 }, { topic: 'after', numPartitions: 1 }] });
    const producer = await connectKafkajsProducer(kafka, {});
    try {
      const value = Buffer.alloc(16 * 1024, 'v');
      let refusal: Error | null = null;
      for (let i = 0; i < 40 && refusal === null; i++) {
        try {
          await producer.send({ topic: 'fills-up', acks: -1, messages: [{ value }] });
        } catch (e) {
          refusal = e as Error;
        }
      }
      expect(refusal, 'a producer writing 640 KiB into a 256 KiB engine was refused').not.toBeNull();
      expect(String((refusal as { type?: string } & Error).type ?? refusal!.message)).toMatch(/POLICY_VIOLATION/);
      // More refusals, over HTTP too; still one line in the log.
      await expect(producer.send({ topic: 'fills-up', acks: -1, messages: [{ value }] })).rejects.toThrow();
      const pushed = await fetch(`${broker.httpUrl}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ queue: 'after', payload: { big: 'x'.repeat(20_000) } }] }),
      });
      expect(pushed.status).toBe(507);
      const body = (await pushed.json()) as { code: string; message: string };
      expect(body.code).toBe('storage_full');
      expect(body.message).toMatch(/memory engine holds \d+ bytes of records and KV entries and its limit is 262144/);
      // KV entries count too.
      const put = await fetch(`${broker.httpUrl}/api/v1/kv/notes/big`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: 'x'.repeat(20_000) }),
      });
      expect(put.status).toBe(507);
      const full = logs.entries.filter((e) => /memory engine is at its size limit/.test(String(e.msg)));
      expect(full, 'the limit is logged once, however many writes it refuses').toHaveLength(1);
      expect(full[0]!.level).toBe(WARN);

      await admin.deleteTopics({ topics: ['fills-up'] });
      // A new producer: the first one would keep asking for the deleted topic's metadata.
      const next = await connectKafkajsProducer(kafkajsClient(broker.bootstrap, { retries: 2 }), {});
      try {
        await next.send({ topic: 'after', acks: -1, messages: [{ value }] });
      } finally {
        await next.disconnect();
      }
      expect(logs.entries.filter((e) => /memory engine has room again/.test(String(e.msg)))).toHaveLength(1);
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });
});
