/**
 * A whole request frame read into what a handler needs: the header, the
 * handler serving its key and version, the decoded body. A frame the
 * connection may not serve throws a client fault (UnservedRequest,
 * RefusedBeforeAuthentication, DecodeError) that closes the connection after
 * earlier answers; ApiVersions at a version not served is answered instead.
 */
import type { Logger } from 'pino';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { requestCodec } from '../../protocol/codec/registry.js';
import type { Message } from '../../protocol/codec/compile.js';
import { decodeRequestHeader, type RequestHeader } from '../../protocol/headers.js';
import { Reader } from '../../protocol/primitives/reader.js';
import type { ApiHandler, ConnectionState } from './handler.js';
import type { HandlerRegistry } from './registry.js';

export type ReadRequest =
  | { header: RequestHeader; handler: ApiHandler; body: Message }
  /** ApiVersions at a version not served: answered with UNSUPPORTED_VERSION and the versions served. */
  | { header: RequestHeader; handler: null; body: Record<string, unknown> };

export function readRequest(frame: Buffer, state: ConnectionState, registry: HandlerRegistry, log: Logger): ReadRequest {
  const r = new Reader(frame);
  const header = decodeRequestHeader(r);
  state.clientId = header.clientId;
  const refusal = state.sasl?.refusal(header.apiKey, Date.now()) ?? null;
  if (refusal !== null) throw new RefusedBeforeAuthentication(refusal);
  const handler = registry.lookup(header.apiKey, header.apiVersion);
  if (!handler) {
    if (header.apiKey === ApiKey.ApiVersions) {
      return { header, handler: null, body: { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: registry.advertised } };
    }
    throw new UnservedRequest(header);
  }
  const body = requestCodec(header.apiKey, header.apiVersion).decode(r);
  // Bytes after the last field are ignored, as Kafka's broker ignores them:
  // librdkafka's Metadata v12 "all topics" request carries three.
  if (r.remaining !== 0) log.debug({ api: handler.api.name, version: header.apiVersion, bytes: r.remaining }, 'request has trailing bytes; ignored');
  return { header, handler, body };
}

/** A request for a key or version this gateway does not serve (other than ApiVersions). */
export class UnservedRequest extends Error {
  override readonly name = 'UnservedRequest';
  constructor(header: RequestHeader) {
    super(`API key ${header.apiKey} version ${header.apiVersion} is not served by this gateway`);
  }
}

/** A request a SASL listener does not serve in the connection's authentication state. */
export class RefusedBeforeAuthentication extends Error {
  override readonly name = 'RefusedBeforeAuthentication';
}
