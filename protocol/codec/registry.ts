import { apis } from '../messages/index.js';
import { inVersions, type ApiDef } from '../schema/definition.js';
import { compileCodec, type MessageCodec } from './compile.js';

/**
 * Every API by key, and the codecs for its requests and responses. Codecs
 * exist for every version Kafka defines for a message (validVersions), so
 * tests and the migration bridge can speak versions the gateway does not
 * serve; what the gateway serves is its handlers' registry (src/gateway/registry.ts).
 */

const byKey: ReadonlyMap<number, ApiDef> = new Map(apis.map((api) => [api.apiKey, api]));

export function apiDefinition(apiKey: number): ApiDef | undefined {
  return byKey.get(apiKey);
}

function knownApi(apiKey: number): ApiDef {
  const api = byKey.get(apiKey);
  if (!api) throw new RangeError(`API key ${apiKey} has no definition`);
  return api;
}

export function requestCodec(apiKey: number, version: number): MessageCodec {
  return compileCodec(knownApi(apiKey).request, version);
}

export function responseCodec(apiKey: number, version: number): MessageCodec {
  return compileCodec(knownApi(apiKey).response, version);
}

export function isFlexibleRequest(apiKey: number, version: number): boolean {
  return inVersions(knownApi(apiKey).request.flexibleVersions, version);
}

export function isFlexibleResponse(apiKey: number, version: number): boolean {
  return inVersions(knownApi(apiKey).response.flexibleVersions, version);
}
