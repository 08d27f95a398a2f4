import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apis } from '../../protocol/messages/index.js';
import { servedRange } from './support/served.js';
import { decodeRequest, encodeRequestFrame } from '../../protocol/frames.js';
import { DecodeError } from '../../protocol/primitives/decode-error.js';
import { messageArbitrary } from './support/arbitrary.js';
import { versionList } from './support/layout.js';

/**
 * Hostile input to request decoding, for every served API and version:
 * truncated frames, garbled bytes, huge length prefixes, negative and
 * enormous array counts, varints that never end. Decoding either succeeds or
 * throws DecodeError; any other exception fails the property, and fast-check
 * shrinks it to the smallest frame that shows it.
 */

const RUNS = 20;

const cases = apis.flatMap((api) => {
  const { min, max } = servedRange(api);
  return versionList(min, max).map((version) => [`${api.name} v${version}`, api, version] as const);
});

/** A frame without its size prefix, as the gateway's framer hands it over. */
function frameOf(apiKey: number, version: number, body: Record<string, unknown>): Buffer {
  return Buffer.concat(encodeRequestFrame({ apiKey, apiVersion: version, correlationId: 7, clientId: 'fuzz' }, body)).subarray(4);
}

type Outcome = 'decoded' | 'DecodeError';

/** Decodes; DecodeError is an answer, anything else escapes and fails the test. */
function outcome(frame: Buffer): Outcome {
  try {
    decodeRequest(frame);
    return 'decoded';
  } catch (e) {
    if (e instanceof DecodeError) return 'DecodeError';
    throw e;
  }
}

/** Length prefixes and counts chosen to hurt: huge, negative, and varints that never end. */
const HOSTILE_PATTERNS: readonly Buffer[] = [
  Buffer.from([0x7f, 0xff, 0xff, 0xff]), // int32 max
  Buffer.from([0x80, 0x00, 0x00, 0x00]), // int32 min
  Buffer.from([0xff, 0xff, 0xff, 0xfe]), // -2
  Buffer.from([0x7f, 0xff]), // int16 max
  Buffer.from([0x80, 0x00]), // int16 min
  Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), // uvarint 2^32-1
  Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x07]), // uvarint 2^31-1
  Buffer.alloc(12, 0xff), // a varint that never ends
  Buffer.alloc(12, 0x80),
];

function heapAndBuffers(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe.each(cases)('%s request', (_title, api, version) => {
  const valid = messageArbitrary(api.request, version).map((body) => frameOf(api.apiKey, version, body));

  it('every truncation of a valid frame is a DecodeError', () => {
    fc.assert(
      fc.property(valid, fc.nat(), (frame, cut) => {
        expect(outcome(frame.subarray(0, cut % frame.length))).toBe('DecodeError');
      }),
      { numRuns: RUNS },
    );
  });

  it('garbled bytes decode or raise DecodeError, nothing else', () => {
    fc.assert(
      fc.property(valid, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }), (frame, edits) => {
        const garbled = Buffer.from(frame);
        // Keep the API key and version, so the body decoder is the one under test.
        for (const [at, byte] of edits) garbled[4 + (at % Math.max(1, garbled.length - 4))] = byte;
        outcome(garbled);
      }),
      { numRuns: RUNS },
    );
  });

  it('random bodies after a valid header decode or raise DecodeError', () => {
    fc.assert(
      fc.property(valid, fc.uint8Array({ maxLength: 64 }), (frame, noise) => {
        const headerOnly = frameOf(api.apiKey, version, {}).subarray(0, 8);
        outcome(Buffer.concat([headerOnly, frame.subarray(8, 12), noise]));
      }),
      { numRuns: RUNS },
    );
  });

  it('hostile lengths and endless varints spliced in anywhere decode or raise DecodeError, within the input size', () => {
    fc.assert(
      fc.property(valid, fc.nat(), fc.constantFrom(...HOSTILE_PATTERNS), fc.boolean(), (frame, at, pattern, overwrite) => {
        const i = 8 + (at % Math.max(1, frame.length - 8));
        const tail = overwrite ? frame.subarray(Math.min(frame.length, i + pattern.length)) : frame.subarray(i);
        const hostile = Buffer.concat([frame.subarray(0, i), pattern, tail]);
        const before = heapAndBuffers();
        outcome(hostile);
        // A 2^31 count or length acted on would take gigabytes; the input is under a kilobyte.
        expect(heapAndBuffers() - before).toBeLessThan(64 * 1024 * 1024);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('frames that lie about sizes', () => {
  const header = (apiKey: number, version: number): Buffer => frameOf(apiKey, version, {}).subarray(0, 14); // key, version, correlation id, clientId "fuzz"

  it('a 20-byte Metadata v0 frame claiming 2^31-1 topics fails at once without allocating them', () => {
    const frame = Buffer.concat([header(3, 0), Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0])]);
    expect(frame.length).toBe(20);
    const before = heapAndBuffers();
    expect(() => decodeRequest(frame)).toThrow(DecodeError);
    expect(heapAndBuffers() - before).toBeLessThan(16 * 1024 * 1024);
  });

  it('a flexible Metadata v12 frame claiming 2^32-2 topics fails at once', () => {
    const frame = Buffer.concat([header(3, 12), Buffer.from([0x00]), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])]);
    expect(() => decodeRequest(frame)).toThrow(DecodeError);
  });

  it('a negative array count other than -1 is a DecodeError', () => {
    const frame = Buffer.concat([header(3, 4), Buffer.from([0xff, 0xff, 0xff, 0xfe, 1])]);
    expect(() => decodeRequest(frame)).toThrow(/array count -2/);
  });

  it('a Produce v3 record set claiming 2 GiB is a DecodeError naming the truncation', () => {
    const body = Buffer.from([0xff, 0xff, 0, 1, 0, 0, 0, 100, 0, 0, 0, 1, 0, 1, 0x74, 0, 0, 0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 1, 2, 3]);
    expect(() => decodeRequest(Buffer.concat([header(0, 3), body]))).toThrow(/truncated input: bytes needs 2147483647 bytes/);
  });

  it('a varint that never ends is a DecodeError, not a loop', () => {
    const frame = Buffer.concat([header(3, 12), Buffer.from([0x00]), Buffer.alloc(64, 0xff)]);
    expect(() => decodeRequest(frame)).toThrow(DecodeError);
  });

  it('an API key or version without a definition is a DecodeError', () => {
    const unknownKey = Buffer.concat([Buffer.from([0x03, 0xe7]), header(3, 0).subarray(2)]);
    expect(() => decodeRequest(unknownKey)).toThrow(DecodeError);
    const unknownVersion = Buffer.concat([header(3, 0).subarray(0, 2), Buffer.from([0x00, 0x63]), header(3, 0).subarray(4)]);
    expect(() => decodeRequest(unknownVersion)).toThrow(DecodeError);
  });
});
