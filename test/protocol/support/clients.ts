import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { apis } from '../../../protocol/messages/index.js';
import { servedRange } from './served.js';
import type { ApiDef } from '../../../protocol/schema/definition.js';

/**
 * The protocol codecs two independent Kafka clients ship, found on disk and
 * paired with our APIs by name, for the oracle tests.
 */

const require = createRequire(import.meta.url);

export function served(api: ApiDef, version: number): boolean {
  const { min, max } = servedRange(api);
  return version >= min && version <= max;
}

const byCamelName = new Map(apis.map((a) => [a.name.charAt(0).toLowerCase() + a.name.slice(1), a]));

/** Our definition for one of kafkajs's protocol folders (named after the API in camelCase). */
export function apiForKafkajsFolder(name: string): ApiDef | undefined {
  return byCamelName.get(name);
}

// kafkajs (CommonJS): src/protocol/requests/<api>/v<N>/{request,response}.js
export const kafkajsProtocolDir = join(dirname(require.resolve('kafkajs/package.json')), 'src', 'protocol');

export interface KafkajsResponse {
  decode(raw: Buffer): unknown;
  parse(decoded: unknown): unknown;
}

export type KafkajsRequestFactory = (args: Record<string, unknown>) => { apiKey: number; apiVersion: number; encode(): unknown };

export function kafkajsVersions(): { api: ApiDef; version: number; dir: string }[] {
  const requests = join(kafkajsProtocolDir, 'requests');
  const out: { api: ApiDef; version: number; dir: string }[] = [];
  for (const name of readdirSync(requests)) {
    const api = apiForKafkajsFolder(name);
    if (!api) continue;
    for (const v of readdirSync(join(requests, name))) {
      const m = /^v(\d+)$/.exec(v);
      if (m && served(api, Number(m[1]))) out.push({ api, version: Number(m[1]), dir: join(requests, name, v) });
    }
  }
  return out.sort((a, b) => a.api.apiKey - b.api.apiKey || a.version - b.version);
}

export function kafkajsModule<T>(path: string): T {
  return require(path) as T;
}

// @platformatic/kafka (ESM): one module per API version, exported as `<api>V<N>`.
export interface PlatformaticApi {
  createRequest(...args: unknown[]): { buffer: Buffer; length: number };
  parseResponse(correlationId: number, apiKey: number, apiVersion: number, reader: unknown): unknown;
}

export async function platformaticVersions(): Promise<{ api: ApiDef; version: number; module: PlatformaticApi }[]> {
  const kafka = (await import('@platformatic/kafka')) as unknown as Record<string, unknown>;
  const out: { api: ApiDef; version: number; module: PlatformaticApi }[] = [];
  for (const [name, value] of Object.entries(kafka)) {
    const m = /^([a-zA-Z]+)V(\d+)$/.exec(name);
    const api = m ? byCamelName.get(m[1]!) : undefined;
    if (!m || !api || !served(api, Number(m[2]))) continue;
    const module = value as PlatformaticApi;
    if (typeof module.parseResponse === 'function') out.push({ api, version: Number(m[2]), module });
  }
  return out.sort((a, b) => a.api.apiKey - b.api.apiKey || a.version - b.version);
}
