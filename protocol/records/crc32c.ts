import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/**
 * CRC-32C (Castagnoli), the checksum a RecordBatch v2 carries over its
 * attributes-to-end span. The native SIMD implementation runs at memory speed
 * (see test/bench/crc.bench.ts), which matters because every produced batch
 * is checked once. Returned unsigned, as the header stores it.
 */
export function crc32c(buf: Uint8Array): number {
  return nativeCrc32c(buf) >>> 0;
}
