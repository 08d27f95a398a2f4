import { parseVersions, type ApiDef } from '../../../protocol/schema/definition.js';
import { handlers } from '../../../src/gateway/handlers/index.js';

/**
 * The versions the protocol tests exercise for an API: what its handler
 * serves (declared there, once), or, for an API the gateway defines but does
 * not serve, every version Kafka defines for its request.
 */
export function servedRange(api: ApiDef): { min: number; max: number } {
  const handler = handlers.find((h) => h.api.apiKey === api.apiKey);
  const span = parseVersions(handler?.versions ?? api.request.validVersions);
  if (!span || span.max === Infinity) throw new Error(`${api.name}: the versions to test must be a closed range`);
  return span;
}
