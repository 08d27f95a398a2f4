import { randomFillSync } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562), as Queen mints ids: the first 48 bits are the Unix time
 * in ms, so ids sort by when they were minted; within one millisecond a
 * counter in rand_a keeps ids from one process increasing. The core mints its
 * message ids with it and the project's HTTP client its transactionIds, so
 * this room sits below both and imports nothing of either.
 */

let lastMs = -1;
let counter = 0;

// Random bytes for 256 ids, filled from the CSPRNG at once when used up, as
// Node's own randomUUID does: one randomBytes call per id was a tenth of a
// native transaction's CPU in a profile.
const IDS_PER_FILL = 256;
const pool = Buffer.allocUnsafe(16 * IDS_PER_FILL);
let poolAt = pool.length;

/** The next 16 random bytes of the pool, for the caller to overwrite in place. */
function random16(): Buffer {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const bytes = pool.subarray(poolAt, poolAt + 16);
  poolAt += 16;
  return bytes;
}

/** 16 bytes as a UUID's text. */
export function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function mintUuidV7(nowMs: number = Date.now()): string {
  const bytes = random16();
  if (nowMs === lastMs) {
    counter = (counter + 1) & 0xfff;
  } else {
    lastMs = nowMs;
    counter = bytes.readUInt16BE(6) & 0x7ff; // start low so the counter rarely overflows within a ms
  }
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  return formatUuid(bytes);
}

/** The ms timestamp a UUIDv7 was minted at. */
export function uuidV7Time(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}
