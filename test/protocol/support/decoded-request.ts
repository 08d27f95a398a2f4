import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { requestCodec } from '../../../protocol/codec/registry.js';
import { Reader } from '../../../protocol/primitives/reader.js';
import { Writer } from '../../../protocol/primitives/writer.js';
import { inVersions, type ApiDef, type MessageDef } from '../../../protocol/schema/definition.js';
import { apiForKafkajsFolder, kafkajsModule, kafkajsProtocolDir } from './clients.js';
import { layoutOf, type StructLayout } from './layout.js';

/**
 * The request direction of the client oracles: a client's own encoder builds
 * a request body, our codec decodes it, and the result is compared with what
 * the client was asked to send.
 *
 * An expectation (`sent`) names every field on the wire at the version, by
 * our camelCase names, nested as the message is; fields not on the wire at
 * that version, and tagged fields the client does not send, are filled in
 * with the defaults decoding yields. A wire field the expectation forgets, or
 * a field it names that the version does not carry, is a mistake in the
 * table and throws, so a table cannot silently check less than the client
 * sends.
 */

export type Sent = Record<string, unknown>;

export function expectedRequest(message: MessageDef, version: number, sent: Sent): Record<string, unknown> {
  function fill(layout: StructLayout, given: Sent, path: string): Record<string, unknown> {
    const carried = [...layout.plain, ...layout.tagged];
    const stray = Object.keys(given).filter((k) => !carried.some((f) => f.prop === k));
    if (stray.length > 0) throw new Error(`${path}: ${stray.join(', ')} not in ${message.name} v${version}`);
    const out = layout.defaults();
    for (const f of carried) {
      if (!(f.prop in given)) {
        if (layout.plain.includes(f)) throw new Error(`${path}.${f.prop} is on the wire at v${version} but has no expectation`);
        continue;
      }
      const v = given[f.prop];
      if (!f.struct || v === null || v === undefined) out[f.prop] = v;
      else if (f.shape === 'array') out[f.prop] = (v as Sent[]).map((item, i) => fill(f.struct!, item, `${path}.${f.prop}[${i}]`));
      else out[f.prop] = fill(f.struct, v as Sent, `${path}.${f.prop}`);
    }
    return out;
  }
  return fill(layoutOf(message, version), sent, message.name);
}

export function decodeRequest(api: ApiDef, version: number, body: Buffer): { message: Record<string, unknown>; unread: number } {
  const reader = new Reader(body);
  const message = requestCodec(api.apiKey, version).decode(reader);
  return { message, unread: reader.remaining };
}

export function encodeRequest(api: ApiDef, version: number, message: Record<string, unknown>): Buffer {
  const w = new Writer();
  requestCodec(api.apiKey, version).encode(w, message);
  return w.toBuffer();
}

/**
 * Decodes a client's request body and asserts that every field came out as
 * the client sent it, that nothing was left unread, and that our encoder
 * writes the very same bytes back (so records and any field the comparison
 * reads loosely travel unchanged). Returns the decoded message.
 */
export function expectDecodesAs(api: ApiDef, version: number, body: Buffer, sent: Sent): Record<string, unknown> {
  const expected = expectedRequest(api.request, version, sent);
  const { message, unread } = decodeRequest(api, version, body);
  expect(message).toEqual(expected);
  expect(unread, 'bytes left unread after the request').toBe(0);
  expect(encodeRequest(api, version, message).toString('hex'), 'our encoding of what we decoded').toBe(body.toString('hex'));
  return message;
}

// kafkajs's request encoders: src/protocol/requests/<api>/v<N>/request.js, untyped CommonJS.

export interface KafkajsEncoder {
  buffer: Buffer;
}

export interface KafkajsRequest {
  apiKey: number;
  apiVersion: number;
  apiName: string;
  encode(): Promise<KafkajsEncoder>;
}

export type KafkajsRequestFactory = (args: never) => KafkajsRequest;

export interface KafkajsRequestVersion {
  /** kafkajs's folder name, e.g. `offsetCommit`. */
  name: string;
  api: ApiDef;
  version: number;
  request: KafkajsRequestFactory;
}


/**
 * Every request encoder kafkajs ships for an API we define, at every version
 * our codecs know (Kafka's valid versions, which include a few the gateway
 * does not serve: the codec still has to read them right). `unmatched` lists
 * kafkajs's folders for APIs we do not define.
 */
export function kafkajsRequestVersions(): { versions: KafkajsRequestVersion[]; unmatched: string[] } {
  const root = join(kafkajsProtocolDir, 'requests');
  const versions: KafkajsRequestVersion[] = [];
  const unmatched: string[] = [];
  for (const name of readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
    const api = apiForKafkajsFolder(name);
    if (!api) {
      unmatched.push(name);
      continue;
    }
    for (const folder of readdirSync(join(root, name))) {
      const m = /^v(\d+)$/.exec(folder);
      if (!m || !inVersions(api.request.validVersions, Number(m[1]))) continue;
      const request = kafkajsModule<KafkajsRequestFactory>(join(root, name, folder, 'request.js'));
      versions.push({ name, api, version: Number(m[1]), request });
    }
  }
  versions.sort((a, b) => a.api.apiKey - b.api.apiKey || a.version - b.version);
  return { versions, unmatched: unmatched.sort() };
}
