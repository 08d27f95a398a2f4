import { parseVersions } from '../../protocol/schema/definition.js';
import type { AdvertisedApi, ApiHandler } from './handler.js';

/**
 * The handlers by API key. Built once from ./handlers/index.ts; ApiVersions
 * answers from `advertised`, so what the gateway claims and what it can
 * dispatch are the same list.
 */
export class HandlerRegistry {
  private readonly byKey = new Map<number, { handler: ApiHandler; min: number; max: number }>();
  readonly advertised: readonly AdvertisedApi[];

  constructor(handlers: readonly ApiHandler[]) {
    for (const handler of handlers) {
      const { apiKey, name } = handler.api;
      const span = parseVersions(handler.versions);
      // Both messages must have a codec at every version served.
      const defined = [handler.api.request.validVersions, handler.api.response.validVersions].map((v) => parseVersions(v)!);
      const min = Math.max(...defined.map((d) => d.min));
      const max = Math.min(...defined.map((d) => d.max));
      if (!span || span.max === Infinity || span.min < min || span.max > max) {
        throw new Error(`${name} handler: versions "${handler.versions}" must be a closed range within what Kafka defines (${min}-${max})`);
      }
      if (this.byKey.has(apiKey)) throw new Error(`${name} handler: API key ${apiKey} is registered twice`);
      this.byKey.set(apiKey, { handler, min: span.min, max: span.max });
    }
    this.advertised = [...this.byKey.entries()]
      .sort(([a], [b]) => a - b)
      .map(([apiKey, { min, max }]) => ({ apiKey, minVersion: min, maxVersion: max }));
  }

  /** The handler for a key at a version, or undefined when this gateway does not serve it. */
  lookup(apiKey: number, version: number): ApiHandler | undefined {
    const entry = this.byKey.get(apiKey);
    return entry && version >= entry.min && version <= entry.max ? entry.handler : undefined;
  }

  serves(apiKey: number): boolean {
    return this.byKey.has(apiKey);
  }
}
