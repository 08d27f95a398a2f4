/**
 * CRC-32C throughput: the native implementation the gateway uses against a
 * plain table-driven JavaScript one, over the same buffers in the same run.
 * Run with `npx tsx test/bench/crc.bench.ts`.
 */
import { randomBytes } from 'node:crypto';
import { crc32c } from '../../protocol/records/crc32c.js';

const CASTAGNOLI_REFLECTED = 0x82f63b78;

const TABLE = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ CASTAGNOLI_REFLECTED : c >>> 1;
  return c >>> 0;
});

/** The textbook byte-at-a-time CRC-32C: one table lookup per byte. */
function tableCrc32c(buf: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < buf.length; i++) crc = TABLE[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** MB/s of `fn` over `buf`, repeated until about `ms` milliseconds have passed. */
function throughput(fn: (b: Uint8Array) => number, buf: Uint8Array, ms: number): number {
  for (let i = 0; i < 3; i++) fn(buf); // warm up
  let bytes = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < ms) {
    fn(buf);
    bytes += buf.length;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return bytes / 1e6 / (elapsed / 1000);
}

const sizes = [1024, 16 * 1024, 1024 * 1024];
console.log('CRC-32C throughput (MB/s), native @node-rs/crc32 vs table-driven JS');
console.log('size        native      table-js    ratio');
for (const size of sizes) {
  const buf = randomBytes(size);
  if (crc32c(buf) !== tableCrc32c(buf)) throw new Error(`implementations disagree on a ${size}-byte buffer`);
  const native = throughput(crc32c, buf, 500);
  const table = throughput(tableCrc32c, buf, 500);
  console.log(`${String(size).padEnd(10)}  ${native.toFixed(0).padStart(8)}  ${table.toFixed(0).padStart(10)}  ${(native / table).toFixed(1).padStart(7)}x`);
}
