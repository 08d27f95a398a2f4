import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apis } from '../../protocol/messages/index.js';
import { requestCodec, responseCodec } from '../../protocol/codec/registry.js';
import { servedRange } from './support/served.js';
import { decodeRequest, decodeResponse, encodeRequestFrame, encodeResponseFrame } from '../../protocol/frames.js';
import { Reader } from '../../protocol/primitives/reader.js';
import { Writer } from '../../protocol/primitives/writer.js';
import type { MessageDef } from '../../protocol/schema/definition.js';
import { messageArbitrary } from './support/arbitrary.js';
import { interpretedCodec } from './support/interpreter.js';
import { versionList } from './support/layout.js';

/**
 * For every served API and version, arbitrary messages generated from the
 * definition survive encode then decode unchanged, in whole frames with their
 * headers; and a codec that walks the definition at run time writes the same
 * bytes as the generated one, so the generator agrees with a second reading
 * of the definition.
 */

const RUNS = 12;

const cases = apis.flatMap((api) => {
  const { min, max } = servedRange(api);
  return versionList(min, max).map((version) => [`${api.name} v${version}`, api, version] as const);
});

function concat(chunks: Buffer[]): Buffer {
  return Buffer.concat(chunks);
}

function interpreterBytes(message: MessageDef, version: number, body: Record<string, unknown>): Buffer {
  const w = new Writer();
  interpretedCodec(message, version).encode(w, body);
  return w.toBuffer();
}

describe.each(cases)('%s', (_title, api, version) => {
  it('request: frame round trip, and the interpreter writes the same bytes', () => {
    fc.assert(
      fc.property(messageArbitrary(api.request, version), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.option(fc.string({ maxLength: 8 }), { nil: null }), (body, correlationId, clientId) => {
        const header = { apiKey: api.apiKey, apiVersion: version, correlationId, clientId };
        const frame = concat(encodeRequestFrame(header, body));
        expect(frame.readInt32BE(0)).toBe(frame.length - 4);
        const decoded = decodeRequest(frame.subarray(4));
        expect(decoded.header).toEqual(header);
        expect(decoded.body).toEqual(body);

        const w = new Writer();
        requestCodec(api.apiKey, version).encode(w, body);
        const generated = w.toBuffer();
        expect(interpreterBytes(api.request, version, body).equals(generated)).toBe(true);
        expect(interpretedCodec(api.request, version).decode(new Reader(generated))).toEqual(body);
      }),
      { numRuns: RUNS },
    );
  });

  it('response: frame round trip, and the interpreter writes the same bytes', () => {
    fc.assert(
      fc.property(messageArbitrary(api.response, version), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (body, correlationId) => {
        const frame = concat(encodeResponseFrame(api.apiKey, version, correlationId, body));
        expect(frame.readInt32BE(0)).toBe(frame.length - 4);
        const decoded = decodeResponse(frame.subarray(4), api.apiKey, version);
        expect(decoded.correlationId).toBe(correlationId);
        expect(decoded.body).toEqual(body);

        const w = new Writer();
        responseCodec(api.apiKey, version).encode(w, body);
        const generated = w.toBuffer();
        expect(interpreterBytes(api.response, version, body).equals(generated)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
