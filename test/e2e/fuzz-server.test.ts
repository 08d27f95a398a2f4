/**
 * A fuzz campaign against the whole running server, not only its codecs: a
 * gateway process (the CLI, memory engine) is sent, over real sockets,
 * random valid requests of every served API and version, Produce requests
 * with real record batches (valid, or with record bytes mutated under a
 * recomputed CRC so only record validation can catch them), byte-mutated,
 * truncated and extended frames, and plain garbage, several frames per
 * connection written in random chunks, several connections at once.
 *
 * Throughout, a witness connection must keep being answered; at the end the
 * process must still run, its resident memory must be bounded, and it must
 * have logged no unexpected failure (an exception in a handler is logged at
 * error level as "request failed"). Valid Produce requests must be stored.
 *
 * Seeded and bounded: FUZZ_SEED picks the seed (default below), FUZZ_RUNS the
 * number of rounds; a failure prints the seed and the path that reproduces it.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apis } from '../../protocol/messages/index.js';
import { servedRange } from '../protocol/support/served.js';
import { encodeRequestFrame } from '../../protocol/frames.js';
import { BatchAttr, BatchPos } from '../../protocol/records/batch-header.js';
import { buildBatch } from '../../protocol/records/record-batch.js';
import { crc32c } from '../../protocol/records/crc32c.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { messageArbitrary } from '../protocol/support/arbitrary.js';
import { versionList } from '../protocol/support/layout.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway.js';
import { RawConnection } from '../support/raw-connection.js';
import { sleep } from '../support/eventually.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_201);
const ROUNDS = Number(process.env['FUZZ_RUNS'] ?? 250);
const CONNECTIONS_PER_ROUND = 6;
const TIME_LIMIT_MS = 35_000;
const TOPIC = 'fuzz-records';
const PARTITIONS = 3;
const API_VERSIONS = 18;
const METADATA = 3;
const PRODUCE = 0;
const ERROR = 50;
// A gateway with tsx and compiled codecs is well under 300 MB; 768 MB means something is being kept.
const MAX_RSS_BYTES = 768 * 1024 * 1024;

/** Admin calls that allocate as much as they are asked to (100,000 partitions) are left to their own tests. */
const LEFT_OUT = new Set(['CreateTopics', 'CreatePartitions']);

const served = apis
  .filter((api) => !LEFT_OUT.has(api.name))
  .flatMap((api) => {
    const { min, max } = servedRange(api);
    return versionList(min, max).map((version) => ({ api, version }));
  });

let correlation = 1;
function frameOf(apiKey: number, apiVersion: number, body: Record<string, unknown>): Buffer {
  return Buffer.concat(encodeRequestFrame({ apiKey, apiVersion, correlationId: correlation++, clientId: 'fuzz' }, body));
}

const randomValidRequest = fc.constantFrom(...served).chain(({ api, version }) => messageArbitrary(api.request, version).map((body) => frameOf(api.apiKey, version, body)));

const recordArb = fc.record({
  key: fc.option(fc.uint8Array({ maxLength: 32 }).map((b) => Buffer.from(b)), { nil: null }),
  value: fc.option(fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)), { nil: null }),
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: fc.option(fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b)), { nil: null }) }), { maxLength: 3 }),
});

const batchArb = fc
  .record({
    records: fc.array(recordArb, { minLength: 1, maxLength: 20 }),
    compression: fc.constantFrom(CompressionCodec.None, CompressionCodec.Gzip, CompressionCodec.Snappy, CompressionCodec.Lz4, CompressionCodec.Zstd),
  })
  .map(({ records, compression }) => buildBatch({ records, compression, producerId: -1, producerEpoch: -1, baseSequence: -1 }));

/** Record bytes changed after the batch header, the CRC recomputed: only record validation can tell. */
const mutatedBatchArb = fc.tuple(batchArb, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 })).map(([batch, edits]) => {
  const bytes = Buffer.from(batch);
  const bodyStart = BatchPos.RecordCount + 4;
  if (bytes.length > bodyStart) for (const [at, value] of edits) bytes[bodyStart + (at % (bytes.length - bodyStart))] = value;
  bytes.writeUInt32BE(crc32c(bytes.subarray(BatchPos.Attributes)), BatchPos.Crc);
  return bytes;
});

function produceFrame(version: number, partition: number, records: Buffer): Buffer {
  return frameOf(PRODUCE, version, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
}

const produceArgs = fc.record({ version: fc.integer({ min: 3, max: 11 }), partition: fc.integer({ min: 0, max: PARTITIONS - 1 }) });
// Kafka takes zstd batches from Produce v7 only (KIP-110), so a valid zstd batch goes with a version that may carry it.
const zstdBatch = (batch: Buffer) => (batch.readInt16BE(BatchPos.Attributes) & BatchAttr.CompressionMask) === CompressionCodec.Zstd;
const validProduce = fc
  .tuple(produceArgs, batchArb)
  .map(([a, batch]) => ({ ...a, version: zstdBatch(batch) ? Math.max(a.version, 7) : a.version, batch }))
  .map(({ batch, ...a }) => ({ ...a, frame: produceFrame(a.version, a.partition, batch) }));
const mutatedProduce = fc.tuple(produceArgs, mutatedBatchArb).map(([a, batch]) => produceFrame(a.version, a.partition, batch));

/** A frame with bytes overwritten anywhere (size prefix and header included), cut short, or extended. */
const mutatedFrame = fc
  .tuple(
    fc.oneof(randomValidRequest, validProduce.map((p) => p.frame)),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
    fc.constantFrom('edit', 'truncate', 'extend'),
    fc.nat(),
    fc.uint8Array({ maxLength: 64 }),
  )
  .map(([frame, edits, how, cut, extra]) => {
    const bytes = Buffer.from(frame);
    for (const [at, value] of edits) bytes[at % bytes.length] = value;
    if (how === 'truncate') return bytes.subarray(0, cut % bytes.length);
    if (how === 'extend') return Buffer.concat([bytes, Buffer.from(extra)]);
    return bytes;
  });

const garbage = fc.tuple(fc.integer({ min: -5, max: 2_000 }), fc.uint8Array({ maxLength: 256 })).map(([size, body]) => {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(size);
  return Buffer.concat([prefix, Buffer.from(body)]);
});

type Connection = { kind: 'valid-produce'; frame: Buffer; version: number } | { kind: 'mixed'; frames: Buffer[] };

const connectionArb: fc.Arbitrary<{ conn: Connection; splits: number[] }> = fc.record({
  conn: fc.oneof(
    validProduce.map((p): Connection => ({ kind: 'valid-produce', frame: p.frame, version: p.version })),
    fc.array(fc.oneof(randomValidRequest, mutatedProduce, mutatedFrame, garbage), { minLength: 1, maxLength: 3 }).map((frames): Connection => ({ kind: 'mixed', frames })),
  ),
  splits: fc.array(fc.nat(), { maxLength: 3 }),
});

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

describe(`fuzzing the running gateway over real sockets (seed ${SEED}, ${ROUNDS} rounds of ${CONNECTIONS_PER_ROUND} connections)`, () => {
  let gateway: GatewayProcess;
  let witness: RawConnection;
  const stats = { connections: 0, answers: 0, storedBatches: 0 };

  beforeAll(async () => {
    gateway = await startGatewayProcess({ engine: { engine: 'memory' }, autoCreateTopics: true, defaultPartitions: PARTITIONS });
    witness = await RawConnection.open(gateway.port);
    // Creates the records' topic (auto-create on Metadata).
    const meta = await witness.request(METADATA, 4, { topics: [{ name: TOPIC }], allowAutoTopicCreation: true });
    expect((meta.topics as { errorCode: number }[])[0]!.errorCode).toBe(0);
  }, 60_000);
  afterAll(async () => {
    witness?.destroy();
    await gateway?.stop();
  });

  /** Writes one connection's bytes in chunks, reads what comes back for a moment, then hangs up. */
  async function attack({ conn, splits }: { conn: Connection; splits: number[] }): Promise<void> {
    const raw = await RawConnection.open(gateway.port);
    stats.connections++;
    try {
      const bytes = conn.kind === 'valid-produce' ? conn.frame : Buffer.concat(conn.frames);
      const cuts = [...new Set(splits.map((s) => s % Math.max(1, bytes.length)))].sort((a, b) => a - b);
      let from = 0;
      for (const cut of [...cuts, bytes.length]) {
        if (cut > from) raw.write(bytes.subarray(from, cut));
        from = cut;
        await sleep(1);
      }
      if (conn.kind === 'valid-produce') {
        const answer = await raw.readResponse(PRODUCE, conn.version, 10_000).catch(async (e: Error) => {
          await sleep(500);
          const said = gateway.logs.lines.filter((l) => l.includes(`:${raw.localPort}"`));
          throw new Error(`${e.message}; the gateway said: ${said.join("\n") || "nothing"}; its last lines: ${gateway.logs.tail(30)}`);
        });
        const partition = (answer.body.responses as { partitionResponses: { errorCode: number; errorMessage?: string | null }[] }[])[0]!.partitionResponses[0]!;
        expect(partition.errorCode, `a valid batch was refused: ${partition.errorMessage ?? ''}`).toBe(0);
        stats.storedBatches++;
        stats.answers++;
      } else {
        await Promise.race([raw.closed, sleep(60)]);
        stats.answers += raw.unreadFrames;
      }
    } finally {
      raw.destroy();
    }
  }

  it('stays up, keeps serving other connections, keeps memory bounded and logs no unexpected failure', { timeout: 90_000 }, async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fc.array(connectionArb, { minLength: CONNECTIONS_PER_ROUND, maxLength: CONNECTIONS_PER_ROUND }), async (round) => {
        await Promise.all(round.map((c) => attack(c)));
        // The witness, connected all along, is still answered.
        const versions = await witness.request(API_VERSIONS, 3, { clientSoftwareName: 'witness', clientSoftwareVersion: '1' }, 10_000);
        expect(versions.errorCode).toBe(0);
        expect(gateway.pid !== undefined && rssBytes(gateway.pid) < MAX_RSS_BYTES, 'the gateway process is alive with bounded memory').toBe(true);
      }),
      { seed: SEED, numRuns: ROUNDS, interruptAfterTimeLimit: TIME_LIMIT_MS, endOnFailure: true },
    );
    const rss = rssBytes(gateway.pid!);
    const failures = gateway.logs.entries.filter((e) => (e.level ?? 0) >= ERROR);
    expect(failures, 'the gateway logged unexpected failures').toEqual([]);
    // The campaign reached the handlers and stored records, not only the framer.
    expect(stats.storedBatches).toBeGreaterThan(0);
    expect(stats.answers).toBeGreaterThan(stats.connections / 4);
    console.log(`fuzz: seed ${SEED}, ${stats.connections} connections in ${Date.now() - started} ms, ${stats.answers} answers, ${stats.storedBatches} valid batches stored, gateway RSS ${Math.round(rss / 1024 / 1024)} MiB`);
  });
});
