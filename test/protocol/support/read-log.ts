import type { MessageDef } from '../../../protocol/schema/definition.js';
import { layoutOf, type LaidField, type StructLayout } from './layout.js';

/**
 * Compares what a client's decoder read with what we wrote, without mapping
 * field names: the client's reader is instrumented to log every value it
 * reads, in order, and the message we encoded is walked into the same kind of
 * log. Equal logs mean the client found every field at the offset and with
 * the value we meant, and nothing else.
 *
 * Leaf reads (ints, strings, bytes, uuids, tagged sections) are logged;
 * array counts appear as the raw integer the client reads for them.
 */

export type LogEntry = string;

export function normalize(v: unknown): LogEntry {
  if (v === undefined) return 'tags';
  if (v === null) return 'null';
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString('hex')}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'object' && 'high' in (v as object) && 'low' in (v as object)) return String(v); // kafkajs Long
  return String(v);
}

export interface ReadRecorder {
  log: LogEntry[];
  /** Stops recording and puts the reader's methods back. */
  restore(): void;
}

/**
 * Wraps `methods` of a reader class so that each outermost call on a root
 * reader logs its result. `onCall` may edit the log for a call (e.g. drop a
 * length a caller read separately).
 */
export function recordReads(
  proto: Record<string, unknown>,
  methods: readonly string[],
  isRoot: (reader: unknown) => boolean,
  onCall?: (method: string, args: unknown[], log: LogEntry[]) => void,
): ReadRecorder {
  const log: LogEntry[] = [];
  const originals = new Map<string, unknown>();
  let depth = 0;
  for (const m of methods) {
    const original = proto[m] as (...args: unknown[]) => unknown;
    if (typeof original !== 'function') continue;
    originals.set(m, original);
    proto[m] = function (this: unknown, ...args: unknown[]): unknown {
      if (depth > 0 || !isRoot(this)) return original.apply(this, args);
      depth++;
      try {
        const result = original.apply(this, args);
        onCall?.(m, args, log);
        log.push(normalize(result));
        return result;
      } finally {
        depth--;
      }
    };
  }
  return {
    log,
    restore() {
      for (const [m, f] of originals) proto[m] = f;
    },
  };
}

export interface LogStyle {
  /** How a `records` field appears: as its bytes, or as the raw compact length the client reads before skipping it. */
  records: 'bytes' | 'compact-length';
}

/** The log a faithful client would produce reading `body`, encoded at `version`. */
export function expectedReads(message: MessageDef, version: number, body: Record<string, unknown>, style: LogStyle): LogEntry[] {
  const log: LogEntry[] = [];

  function leaf(field: LaidField, flexible: boolean, v: unknown): void {
    if (field.primitive === 'records') {
      if (style.records === 'bytes') log.push(normalize(v));
      else log.push(String(v === null ? 0 : (v as Buffer).length + 1));
      return;
    }
    log.push(normalize(v));
  }

  function field(f: LaidField, flexible: boolean, v: unknown): void {
    if (f.shape === 'primitive') return leaf(f, flexible, v);
    if (f.shape === 'struct') {
      if (f.nullable) log.push(v === null ? '-1' : '1');
      if (v !== null) struct(f.struct!, v as Record<string, unknown>);
      return;
    }
    const items = v as unknown[] | null;
    if (flexible) log.push(String(items === null ? 0 : items.length + 1));
    else log.push(String(items === null ? -1 : items.length));
    for (const item of items ?? []) {
      if (f.struct) struct(f.struct, item as Record<string, unknown>);
      else leaf(f, flexible, item);
    }
  }

  function struct(layout: StructLayout, o: Record<string, unknown>): void {
    for (const f of layout.plain) field(f, layout.flexible, o[f.prop]);
    if (layout.flexible) log.push('tags');
  }

  struct(layoutOf(message, version), body);
  return log;
}
