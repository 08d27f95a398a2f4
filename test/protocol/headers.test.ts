import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import { decodeRequest, decodeResponse, encodeRequestFrame, encodeResponseFrame } from '../../protocol/frames.js';
import {
  decodeRequestHeader,
  encodeRequestHeader,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../protocol/headers.js';
import { Reader } from '../../protocol/primitives/reader.js';
import { Writer } from '../../protocol/primitives/writer.js';

/** Request headers v0-v2 and response headers v0-v1, byte for byte. */

const frameHex = (chunks: Buffer[]): string => Buffer.concat(chunks).toString('hex');

describe('request headers', () => {
  it('v0 (ControlledShutdown v0 only) is key, version and correlation id', () => {
    expect(requestHeaderVersion(7, 0)).toBe(0);
    const w = new Writer();
    encodeRequestHeader(w, { apiKey: 7, apiVersion: 0, correlationId: 9, clientId: 'ignored' });
    expect(w.toBuffer().toString('hex')).toBe('0007' + '0000' + '00000009');
  });

  it('v1 adds the client id as a classic nullable string', () => {
    expect(requestHeaderVersion(ApiKey.Produce, 3)).toBe(1);
    const bytes = frameHex(encodeRequestFrame({ apiKey: ApiKey.Metadata, apiVersion: 0, correlationId: 258, clientId: 'ab' }, { topics: [] }));
    expect(bytes).toBe('00000010' + '0003' + '0000' + '00000102' + '0002' + '6162' + '00000000');
    const nullId = frameHex(encodeRequestFrame({ apiKey: ApiKey.Metadata, apiVersion: 0, correlationId: 1, clientId: null }, { topics: [] }));
    expect(nullId).toBe('0000000e' + '0003' + '0000' + '00000001' + 'ffff' + '00000000');
  });

  it('v2, for flexible versions, keeps the classic client id and adds a tagged section', () => {
    expect(requestHeaderVersion(ApiKey.Metadata, 9)).toBe(2);
    expect(requestHeaderVersion(ApiKey.Metadata, 8)).toBe(1);
    const bytes = frameHex(encodeRequestFrame({ apiKey: ApiKey.Metadata, apiVersion: 12, correlationId: 5, clientId: 'ab' }, { topics: null }));
    // header ... client id (int16 length), empty tags; body: null compact array, two bools, empty tags
    expect(bytes).toBe('00000011' + '0003' + '000c' + '00000005' + '0002' + '6162' + '00' + '00' + '01' + '00' + '00');
  });

  it('a v2 header with tagged fields the gateway does not know still decodes', () => {
    const frame = Buffer.from('0003000c00000005ffff' + '01' + '05' + '02' + 'abcd' + '00' + '01' + '00' + '00', 'hex');
    const { header, body } = decodeRequest(frame);
    expect(header).toEqual({ apiKey: 3, apiVersion: 12, correlationId: 5, clientId: null });
    expect(body.topics).toBeNull();
  });

  it('a header for an unknown key is read up to the client id, so the caller can decide', () => {
    const r = new Reader(Buffer.from('03e7' + '0001' + '0000002a' + '0001' + '78' + 'ff', 'hex'));
    expect(decodeRequestHeader(r)).toEqual({ apiKey: 999, apiVersion: 1, correlationId: 42, clientId: 'x' });
    expect(r.remaining).toBe(1);
  });
});

describe('response headers', () => {
  it('v0 is the correlation id alone', () => {
    expect(responseHeaderVersion(ApiKey.Metadata, 8)).toBe(0);
    const bytes = frameHex(encodeResponseFrame(ApiKey.Heartbeat, 0, 77, { errorCode: 27 }));
    expect(bytes).toBe('00000006' + '0000004d' + '001b');
  });

  it('v1, for flexible versions, adds a tagged section', () => {
    expect(responseHeaderVersion(ApiKey.Heartbeat, 4)).toBe(1);
    const bytes = frameHex(encodeResponseFrame(ApiKey.Heartbeat, 4, 77, { throttleTimeMs: 1, errorCode: 27 }));
    expect(bytes).toBe('0000000c' + '0000004d' + '00' + '00000001' + '001b' + '00');
  });

  it("ApiVersions' response header is v0 at every version, flexible ones included", () => {
    for (let v = 0; v <= 4; v++) expect(responseHeaderVersion(ApiKey.ApiVersions, v)).toBe(0);
    const bytes = frameHex(encodeResponseFrame(ApiKey.ApiVersions, 3, 1, { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }] }));
    // correlation id, then straight into the body: error code, compact array of one, throttle, tags
    expect(bytes).toBe('00000013' + '00000001' + '0023' + '02' + '0012' + '0000' + '0004' + '00' + '00000000' + '00');
    const decoded = decodeResponse(Buffer.from(bytes, 'hex').subarray(4), ApiKey.ApiVersions, 3);
    expect(decoded.correlationId).toBe(1);
    expect(decoded.body.apiKeys).toEqual([{ apiKey: 18, minVersion: 0, maxVersion: 4 }]);
  });

  it('left-over bytes after a body are a DecodeError', () => {
    expect(() => decodeResponse(Buffer.from('0000004d001b00', 'hex'), ApiKey.Heartbeat, 0)).toThrow(/1 bytes left over/);
  });
});
