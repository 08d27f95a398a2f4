import { apis } from '../messages/index.js';
import { inVersions, parseVersions, type ApiDef } from '../schema/definition.js';
import { compileCodec, type MessageCodec } from './compile.js';

/**
 * Every API by key, and the codecs for its requests and responses. Codecs
 * exist for every version Kafka defines for a message (validVersions), so
 * tests and the migration bridge can speak versions the gateway does not
 * serve; `servesVersion` says what the gateway serves.
 */

const byKey: ReadonlyMap<number, ApiDef> = new Map(apis.map((api) => [api.apiKey, api]));

export function apiDefinition(apiKey: number): ApiDef | undefined {
  return byKey.get(apiKey);
}

export function allApis(): readonly ApiDef[] {
  return apis;
}

/** Whether the gateway serves this key at this version. */
export function servesVersion(apiKey: number, version: number): boolean {
  const api = byKey.get(apiKey);
  return api !== undefined && inVersions(api.versions, version);
}

export function servedRange(api: ApiDef): { min: number; max: number } {
  const span = parseVersions(api.versions);
  if (!span || span.max === Infinity) throw new Error(`${api.name}: served versions must be a closed range, not "${api.versions}"`);
  return span;
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

/** Compiles every served version up front, so the first request of each kind pays nothing. */
export function compileServedCodecs(): number {
  let count = 0;
  for (const api of apis) {
    const { min, max } = servedRange(api);
    for (let v = min; v <= max; v++) {
      compileCodec(api.request, v);
      compileCodec(api.response, v);
      count += 2;
    }
  }
  return count;
}
