import { Reader } from './primitives/reader.js';
import { Writer } from './primitives/writer.js';
import { ApiKey } from './api-keys.js';
import { apiDefinition, isFlexibleRequest, isFlexibleResponse } from './codec/registry.js';
import { inVersions } from './schema/definition.js';
import { readTagged } from './codec/runtime.js';

/**
 * Request headers v0-v2 and response headers v0-v1.
 *
 * Request header v1 adds the client id (a nullable, never compact, string);
 * v2, used by flexible request versions, adds a tagged-field section.
 * Response header v1, used by flexible response versions, adds a tagged-field
 * section after the correlation id, except for ApiVersions, whose response
 * header is always v0 so that a client can read the answer whatever version
 * it asked for.
 */

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

export function requestHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 | 2 {
  // ControlledShutdown v0 was the one request with header v0; it is not served here.
  if (apiKey === 7 && apiVersion === 0) return 0;
  const api = apiDefinition(apiKey);
  if (api && inVersions(api.request.validVersions, apiVersion) && isFlexibleRequest(apiKey, apiVersion)) return 2;
  return 1;
}

export function responseHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 {
  if (apiKey === ApiKey.ApiVersions) return 0;
  const api = apiDefinition(apiKey);
  if (api && inVersions(api.response.validVersions, apiVersion) && isFlexibleResponse(apiKey, apiVersion)) return 1;
  return 0;
}

/**
 * Reads a request header. For a key or version this project has no
 * definition of, the header's tagged section cannot be located; such a header
 * is returned with the reader left after the client id, and the caller
 * decides (ApiVersions answers; anything else closes the connection).
 */
export function decodeRequestHeader(r: Reader): RequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const headerVersion = requestHeaderVersion(apiKey, apiVersion);
  const clientId = headerVersion >= 1 ? r.nullableString() : null;
  if (headerVersion >= 2) readTagged(r, null);
  return { apiKey, apiVersion, correlationId, clientId };
}

export function encodeRequestHeader(w: Writer, header: RequestHeader): void {
  const headerVersion = requestHeaderVersion(header.apiKey, header.apiVersion);
  w.int16(header.apiKey);
  w.int16(header.apiVersion);
  w.int32(header.correlationId);
  if (headerVersion >= 1) w.nullableString(header.clientId);
  if (headerVersion >= 2) w.uvarint(0);
}

export function encodeResponseHeader(w: Writer, apiKey: number, apiVersion: number, correlationId: number): void {
  w.int32(correlationId);
  if (responseHeaderVersion(apiKey, apiVersion) >= 1) w.uvarint(0);
}

export function decodeResponseHeader(r: Reader, apiKey: number, apiVersion: number): { correlationId: number } {
  const correlationId = r.int32();
  if (responseHeaderVersion(apiKey, apiVersion) >= 1) readTagged(r, null);
  return { correlationId };
}
