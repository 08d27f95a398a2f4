import type { Reader } from '../primitives/reader.js';
import type { Writer } from '../primitives/writer.js';
import type { MessageDef } from '../schema/definition.js';
import { generateCodecSource } from './generate.js';
import { EMPTY, readArray, readTagged, writeArray, writeRecords, writeTagged } from './runtime.js';

/** A decoded message: fields by camelCase name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Message = Record<string, any>;

export interface MessageCodec {
  decode(r: Reader): Message;
  encode(w: Writer, message: Message): void;
}

/** Names the generated source may use, in the order `compileCodec` passes them. */
export const RUNTIME_NAMES = ['readArray', 'writeArray', 'readTagged', 'writeTagged', 'writeRecords', 'EMPTY'] as const;
export const RUNTIME_VALUES = [readArray, writeArray, readTagged, writeTagged, writeRecords, EMPTY] as const;

const compiled = new Map<MessageDef, Map<number, MessageCodec>>();

/**
 * The codec for one message at one version, compiled from its definition the
 * first time it is asked for and kept for the life of the process.
 */
export function compileCodec(message: MessageDef, version: number): MessageCodec {
  let byVersion = compiled.get(message);
  if (!byVersion) compiled.set(message, (byVersion = new Map()));
  let codec = byVersion.get(version);
  if (!codec) {
    const { body } = generateCodecSource(message, version);
    const factory = new Function(...RUNTIME_NAMES, body) as (...runtime: typeof RUNTIME_VALUES) => MessageCodec;
    codec = factory(...RUNTIME_VALUES);
    byVersion.set(version, codec);
  }
  return codec;
}
