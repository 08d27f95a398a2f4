import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c } from '../../../protocol/records/crc32c.js';
import { require } from './bytes.js';

const kafkajsCrc32C: (b: Buffer) => number = require('kafkajs/src/protocol/recordBatch/crc32C');

describe('crc32c', () => {
  it('gives the CRC-32C check value for "123456789"', () => {
    // The standard check value of the Castagnoli polynomial (RFC 3720 family).
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('is unsigned, as the batch header stores it', () => {
    expect(crc32c(Buffer.from('a'))).toBe(0xc1d04330);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it('agrees with kafkajs on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        const buf = Buffer.from(bytes);
        expect(crc32c(buf)).toBe(kafkajsCrc32C(buf));
      }),
      { numRuns: 200 },
    );
  });
});
