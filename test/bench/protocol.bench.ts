/**
 * Protocol benchmark (`npm run bench:protocol`; not part of `npm test`).
 *
 *  (a) Produce request decode-and-validate, MB/s, for 1 KiB, 16 KiB and 1 MiB batches
 *  (b) Fetch response encode, MB/s, same batch sizes
 *  (d) what the record walk costs Produce: decode-and-validate with the header
 *      and CRC only against the same plus every record walked (and compressed
 *      batches inflated), interleaved in one run, as a ratio
 *  (c) the codec as shipped (generated source compiled at load with new Function)
 *      against the same generated source loaded ahead of time from a module, and
 *      against an interpreter that walks the definition at run time
 *
 * Every figure in a section is measured in the same run, and ratios are printed
 * beside the absolute numbers. CRC-32C implementations are compared in
 * test/bench/crc.bench.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { apis, Fetch, Metadata, Produce } from '../../protocol/messages/index.js';
import { decodeRequest, encodeRequestFrame, encodeResponseFrame } from '../../protocol/frames.js';
import { compileCodec, RUNTIME_NAMES, RUNTIME_VALUES, type MessageCodec } from '../../protocol/codec/compile.js';
import { generateCodecSource } from '../../protocol/codec/generate.js';
import { servedRange } from '../protocol/support/served.js';
import { Reader } from '../../protocol/primitives/reader.js';
import { Writer } from '../../protocol/primitives/writer.js';
import { buildBatch, CODEC_NAMES, CompressionCodec, inflationBudget, validateBatches } from '../../protocol/records/index.js';
import { DEFAULT_APPEND_LIMITS } from '../../src/core/rules/batches.js';
import type { MessageDef } from '../../protocol/schema/definition.js';
import { interpretedCodec } from '../protocol/support/interpreter.js';

const MIN_MS = Number(process.env.BENCH_MS ?? 300);
let sink: unknown;

/** Operations per second of `fn`, after a warm-up, over at least MIN_MS. */
function opsPerSecond(fn: () => unknown): number {
  const warmUntil = performance.now() + MIN_MS / 4;
  while (performance.now() < warmUntil) sink = fn();
  let ops = 0;
  let batch = 1;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < MIN_MS) {
    for (let i = 0; i < batch; i++) sink = fn();
    ops += batch;
    batch *= 2;
    elapsed = performance.now() - start;
  }
  return (ops / elapsed) * 1000;
}

const ROUNDS = 5;

/**
 * Contestants measured in turn, ROUNDS times, and each one's median kept, so
 * load that drifts during the run (other processes, GC) falls on all of them.
 */
function interleaved(contestants: (() => unknown)[]): number[] {
  const samples: number[][] = contestants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    contestants.forEach((fn, i) => samples[i]!.push(opsPerSecond(fn)));
  }
  return samples.map((s) => s.sort((a, b) => a - b)[Math.floor(s.length / 2)]!);
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mbps = (bytes: number, ops: number): number => (bytes * ops) / (1024 * 1024);

function table(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const r of rows) console.log(line(r));
}

const WORDS = ['order', 'customer', 'shipped', 'pending', 'eur', 'usd', 'warehouse', 'north', 'south', 'priority', 'express', 'returned'];

/** Words from a fixed-seed generator: text that compresses about as well as real JSON does (3-5x), not a run of one letter. */
function prose(length: number, seed: number): string {
  let x = seed * 2654435761 + 1;
  let out = '';
  while (out.length < length) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += `${WORDS[x % WORDS.length]}-${x % 9973} `;
  }
  return out.slice(0, length);
}

/** A realistic v2 batch of about `size` bytes (before compression): keys, headers, values of printable JSON-ish bytes. */
function batchOf(size: number, compression: CompressionCodec = CompressionCodec.None): Buffer {
  const valueSize = size <= 1024 ? 80 : size <= 16 * 1024 ? 400 : 4000;
  const count = Math.max(1, Math.floor(size / (valueSize + 40)));
  const t0 = 1_700_000_000_000n;
  const records = Array.from({ length: count }, (_, i) => ({
    key: `order-${i}`,
    value: Buffer.from(JSON.stringify({ id: i, pad: prose(valueSize - 30, i) }).slice(0, valueSize)),
    headers: [{ key: 'trace', value: `t-${i}` }],
    timestamp: t0 + BigInt(i),
  }));
  return buildBatch({ records, producerId: 4000n, producerEpoch: 0, baseSequence: 0, compression });
}

const SIZES: [string, number][] = [['1 KiB', 1024], ['16 KiB', 16 * 1024], ['1 MiB', 1024 * 1024]];

function produceAndFetch(): void {
  const rows: string[][] = [];
  for (const [label, size] of SIZES) {
    const batch = batchOf(size);
    for (const version of [3, 9, 11]) {
      const frame = Buffer.concat(
        encodeRequestFrame(
          { apiKey: 0, apiVersion: version, correlationId: 1, clientId: 'bench' },
          { transactionalId: null, acks: -1, timeoutMs: 30000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records: batch }] }] },
        ),
      ).subarray(4);
      const ops = opsPerSecond(() => {
        const { body } = decodeRequest(frame);
        let n = 0;
        for (const topic of body.topicData) for (const p of topic.partitionData) n += validateBatches(p.records).length;
        return n;
      });
      rows.push([`Produce v${version} decode + validate`, label, fmt(batch.length), fmt(ops), fmt(mbps(frame.length, ops), 1)]);
    }
    for (const version of [4, 12, 16]) {
      const body = {
        throttleTimeMs: 0, errorCode: 0, sessionId: 0,
        responses: [{ topic: 'orders', topicId: '5f0c2a1e-7b3d-4c8e-9a10-2b3c4d5e6f70', partitions: [{ partitionIndex: 0, errorCode: 0, highWatermark: 1000n, lastStableOffset: 1000n, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: [batch] }] }],
      };
      const length = encodeResponseFrame(1, version, 1, body).reduce((n, c) => n + c.length, 0);
      const ops = opsPerSecond(() => encodeResponseFrame(1, version, 1, body));
      rows.push([`Fetch v${version} encode (stored batch by reference)`, label, fmt(batch.length), fmt(ops), fmt(mbps(length, ops), 1)]);
      const opsCopy = opsPerSecond(() => Buffer.concat(encodeResponseFrame(1, version, 1, body)));
      rows.push([`Fetch v${version} encode + concat into one buffer`, label, fmt(batch.length), fmt(opsCopy), fmt(mbps(length, opsCopy), 1)]);
    }
  }
  table('(a) Produce decode-and-validate, (b) Fetch encode (records: protocol/records buildBatch + validateBatches, CRC-32C checked)', ['operation', 'batch', 'bytes', 'ops/s', 'MB/s'], rows);
}

/**
 * (d) The Produce path as the core runs it since it walks records
 * (src/core/rules/batches.ts, default limits), against the header-and-CRC-only
 * check it replaced, on the same frames, interleaved.
 */
function recordWalkCost(): void {
  const cases: [CompressionCodec, string, number][] = [
    [CompressionCodec.None, '1 KiB', 1024],
    [CompressionCodec.None, '16 KiB', 16 * 1024],
    [CompressionCodec.None, '1 MiB', 1024 * 1024],
    [CompressionCodec.Gzip, '16 KiB', 16 * 1024],
    [CompressionCodec.Gzip, '1 MiB', 1024 * 1024],
    [CompressionCodec.Lz4, '1 MiB', 1024 * 1024],
    [CompressionCodec.Zstd, '1 MiB', 1024 * 1024],
  ];
  const rows: string[][] = [];
  const ratios: number[] = [];
  for (const [codec, label, size] of cases) {
    const batch = batchOf(size, codec);
    const frame = Buffer.concat(
      encodeRequestFrame(
        { apiKey: 0, apiVersion: 9, correlationId: 1, clientId: 'bench' },
        { transactionalId: null, acks: -1, timeoutMs: 30000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records: batch }] }] },
      ),
    ).subarray(4);
    const produce = (walk: boolean) => () => {
      const { body } = decodeRequest(frame);
      const rules = walk ? { records: inflationBudget(DEFAULT_APPEND_LIMITS.maxInflatedBatchBytes, DEFAULT_APPEND_LIMITS.maxInflatedRequestBytes) } : {};
      let n = 0;
      for (const topic of body.topicData) for (const p of topic.partitionData) n += validateBatches(p.records, rules).length;
      return n;
    };
    const [headerOnly, walked] = interleaved([produce(false), produce(true)]);
    ratios.push(walked! / headerOnly!);
    rows.push([
      `${CODEC_NAMES[codec]}, ${label} of records`,
      fmt(batch.length),
      fmt(headerOnly!),
      fmt(walked!),
      `${fmt(walked! / headerOnly!, 2)}x`,
      fmt(mbps(size, walked!), 1),
    ]);
  }
  table(
    `(d) Produce v9 decode-and-validate, header + CRC only vs every record walked (compressed batches inflated); medians of ${ROUNDS} interleaved rounds`,
    ['batch', 'bytes sent', 'header+CRC ops/s', 'with walk ops/s', 'walk/header', 'records MB/s walked'],
    rows,
  );
  const uncompressed = ratios.slice(0, 3);
  console.log(`record walk on uncompressed batches: ${uncompressed.map((r) => `${fmt(r, 2)}x`).join(', ')} of the header-and-CRC throughput (1 KiB, 16 KiB, 1 MiB); compressed batches pay for inflation, as Kafka's broker does.`);
}

/** Writes the generated source of each codec into one .mjs module and imports it: the ahead-of-time form. */
async function aheadOfTime(messages: { def: MessageDef; version: number }[]): Promise<{ codecs: MessageCodec[]; importMs: number; bytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'queen-codec-'));
  try {
    const factories = messages.map(({ def, version }, i) => `function codec${i}(${RUNTIME_NAMES.join(', ')}) {\n${generateCodecSource(def, version).body}\n}`);
    const source = `${factories.join('\n')}\nexport default [${messages.map((_, i) => `codec${i}`).join(', ')}];\n`;
    const file = join(dir, 'codecs.mjs');
    writeFileSync(file, source);
    const start = performance.now();
    const mod = (await import(pathToFileURL(file).href)) as { default: ((...runtime: typeof RUNTIME_VALUES) => MessageCodec)[] };
    const codecs = mod.default.map((factory) => factory(...RUNTIME_VALUES));
    return { codecs, importMs: performance.now() - start, bytes: source.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function metadataResponse(): Record<string, unknown> {
  return {
    throttleTimeMs: 0,
    brokers: [0, 1, 2].map((id) => ({ nodeId: id, host: `gateway-${id}.queen.internal`, port: 9092, rack: id === 2 ? null : `rack-${id}` })),
    clusterId: 'queen-cluster-7',
    controllerId: 0,
    topics: Array.from({ length: 10 }, (_, t) => ({
      errorCode: 0, name: `topic-${t}`, topicId: '5f0c2a1e-7b3d-4c8e-9a10-2b3c4d5e6f7' + (t % 10), isInternal: false,
      partitions: Array.from({ length: 4 }, (_, p) => ({ errorCode: 0, partitionIndex: p, leaderId: p % 3, leaderEpoch: 3, replicaNodes: [p % 3], isrNodes: [p % 3], offlineReplicas: [] })),
      topicAuthorizedOperations: -2147483648,
    })),
  };
}

async function codecForms(): Promise<void> {
  const batch = batchOf(1024);
  const subjects: { name: string; def: MessageDef; version: number; body: Record<string, unknown> }[] = [
    { name: 'Metadata v12 response (3 brokers, 10 topics x 4 partitions)', def: Metadata.response, version: 12, body: metadataResponse() },
    { name: 'Metadata v1 response (same content, classic encoding)', def: Metadata.response, version: 1, body: metadataResponse() },
    { name: 'Produce v9 request (1 topic, 1 KiB batch)', def: Produce.request, version: 9, body: { transactionalId: null, acks: -1, timeoutMs: 30000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records: batch }] }] } },
    { name: 'Fetch v12 request (3 topics x 3 partitions)', def: Fetch.request, version: 12, body: { replicaId: -1, maxWaitMs: 500, minBytes: 1, maxBytes: 52428800, isolationLevel: 1, sessionId: 0, sessionEpoch: -1, topics: [0, 1, 2].map((t) => ({ topic: `topic-${t}`, partitions: [0, 1, 2].map((p) => ({ partition: p, currentLeaderEpoch: 3, fetchOffset: 1000n + BigInt(p), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1048576 })) })), forgottenTopicsData: [], rackId: '' } },
  ];
  const { codecs: aot } = await aheadOfTime(subjects);
  const rows: string[][] = [];
  const verdict: number[] = [];
  subjects.forEach((s, i) => {
    const loadCompiled = compileCodec(s.def, s.version);
    const interpreted = interpretedCodec(s.def, s.version);
    const w0 = new Writer();
    loadCompiled.encode(w0, s.body);
    const bytes = w0.toBuffer();
    const forms: [string, { decode(r: Reader): unknown; encode(w: Writer, m: Record<string, unknown>): void }][] = [
      ['compiled at load', loadCompiled],
      ['ahead of time', aot[i]!],
      ['interpreter', interpreted],
    ];
    // All three must agree on the bytes before their speed means anything.
    for (const [form, codec] of forms) {
      const w = new Writer();
      codec.encode(w, s.body);
      if (!w.toBuffer().equals(bytes)) throw new Error(`${form} writes different bytes for ${s.name}`);
    }
    const decodeOps = interleaved(forms.map(([, c]) => () => c.decode(new Reader(bytes))));
    const encodeOps = interleaved(forms.map(([, c]) => () => { const w = new Writer(); c.encode(w, s.body); return w.finish(); }));
    forms.forEach(([form], j) => {
      rows.push([s.name, form, fmt(decodeOps[j]!), `${fmt(decodeOps[j]! / decodeOps[0]!, 2)}x`, fmt(encodeOps[j]!), `${fmt(encodeOps[j]! / encodeOps[0]!, 2)}x`]);
    });
    verdict.push(decodeOps[1]! / decodeOps[0]!, encodeOps[1]! / encodeOps[0]!);
  });
  table('(c) codec forms, same generated source; ratios relative to "compiled at load" (higher is faster)', ['message', 'form', 'decode ops/s', 'ratio', 'encode ops/s', 'ratio'], rows);

  // Start-up cost: every served codec, generated and compiled, against importing them from a module.
  const all = apis.flatMap((api) => {
    const { min, max } = servedRange(api);
    const list: { def: MessageDef; version: number }[] = [];
    for (let v = min; v <= max; v++) list.push({ def: api.request, version: v }, { def: api.response, version: v });
    return list;
  });
  const start = performance.now();
  for (const { def, version } of all) {
    const factory = new Function(...RUNTIME_NAMES, generateCodecSource(def, version).body) as (...r: typeof RUNTIME_VALUES) => MessageCodec;
    sink = factory(...RUNTIME_VALUES);
  }
  const compileMs = performance.now() - start;
  const { importMs, bytes } = await aheadOfTime(all);
  console.log(`\nstart-up, all ${all.length} served codecs: generate + compile at load ${fmt(compileMs, 1)} ms; import of a pre-generated ${fmt(bytes / 1024, 0)} KiB module ${fmt(importMs, 1)} ms (${fmt(compileMs / importMs, 2)}x)`);
  const geo = Math.exp(verdict.reduce((a, r) => a + Math.log(r), 0) / verdict.length);
  const call = Math.abs(geo - 1) < 0.1
    ? 'within 10%: no measurable difference (the same code, JIT-compiled the same way)'
    : geo > 1 ? 'ahead-of-time is faster' : 'compiled-at-load is faster';
  console.log(`verdict: ahead-of-time runs at ${fmt(geo, 3)}x the speed of compiled-at-load (geometric mean of the ${verdict.length} ratios above, medians of ${ROUNDS} interleaved rounds); ${call}.`);
}

console.log(`queen-gateway protocol benchmark: node ${process.version}, ${MIN_MS} ms per measurement`);
// BENCH_ONLY=d (or ab, c, ...) runs those sections alone.
const only = process.env.BENCH_ONLY;
const wanted = (section: string): boolean => !only || [...section].some((s) => only.includes(s));
if (wanted('ab')) produceAndFetch();
if (wanted('d')) recordWalkCost();
if (wanted('c')) await codecForms();
void sink;
