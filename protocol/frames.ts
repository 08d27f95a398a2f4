import { Reader } from './primitives/reader.js';
import { Writer } from './primitives/writer.js';
import { DecodeError } from './primitives/decode-error.js';
import { apiDefinition, requestCodec, responseCodec } from './codec/registry.js';
import { inVersions } from './schema/definition.js';
import type { Message } from './codec/compile.js';
import {
  decodeRequestHeader,
  decodeResponseHeader,
  encodeRequestHeader,
  encodeResponseHeader,
  type RequestHeader,
} from './headers.js';

/**
 * Whole frames: a 4-byte size, a header and a body. The server decodes
 * requests and encodes responses; clients (tests, the migration bridge) do the
 * reverse with the same codecs.
 */

/** Encodes a response frame, size prefix included, as a list of buffers ready for writev. */
export function encodeResponseFrame(apiKey: number, apiVersion: number, correlationId: number, body: Message): Buffer[] {
  const w = new Writer(512);
  const setSize = w.reserveInt32();
  encodeResponseHeader(w, apiKey, apiVersion, correlationId);
  responseCodec(apiKey, apiVersion).encode(w, body);
  setSize(w.length - 4);
  return w.finish();
}

/** Encodes a request frame, size prefix included. */
export function encodeRequestFrame(header: RequestHeader, body: Message): Buffer[] {
  const w = new Writer(256);
  const setSize = w.reserveInt32();
  encodeRequestHeader(w, header);
  requestCodec(header.apiKey, header.apiVersion).encode(w, body);
  setSize(w.length - 4);
  return w.finish();
}

function expectEnd(r: Reader, what: string): void {
  if (r.remaining !== 0) throw new DecodeError(`${r.remaining} bytes left over after the ${what}`, r.pos);
}

/** Decodes a request frame without its size prefix. */
export function decodeRequest(frame: Buffer): { header: RequestHeader; body: Message } {
  const r = new Reader(frame);
  const header = decodeRequestHeader(r);
  // The key and version come off the wire: one without a definition is bad input, not a programming error.
  const api = apiDefinition(header.apiKey);
  if (!api) throw new DecodeError(`API key ${header.apiKey} is not one this gateway knows`, 0);
  if (!inVersions(api.request.validVersions, header.apiVersion)) {
    throw new DecodeError(`${api.name} has no version ${header.apiVersion} (Kafka defines ${api.request.validVersions})`, 2);
  }
  const body = requestCodec(header.apiKey, header.apiVersion).decode(r);
  expectEnd(r, 'request body');
  return { header, body };
}

/** Decodes a response frame without its size prefix; the caller knows which request it answers. */
export function decodeResponse(frame: Buffer, apiKey: number, apiVersion: number): { correlationId: number; body: Message } {
  const r = new Reader(frame);
  const { correlationId } = decodeResponseHeader(r, apiKey, apiVersion);
  const body = responseCodec(apiKey, apiVersion).decode(r);
  expectEnd(r, 'response body');
  return { correlationId, body };
}
