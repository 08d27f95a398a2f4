import type { Pool, Submittable } from 'pg';
import { statementLatency } from '../../../metrics/postgres.js';
import type { Availability } from './availability.js';

/**
 * Rows read in PostgreSQL's binary COPY format, for the Fetch path.
 *
 * `pg` asks for every result in text form, where a bytea comes as hex: twice
 * its size on the wire, turned into a JavaScript string and decoded back, and
 * its `binary` option reads fields as UTF-8 strings, which corrupts bytea. A
 * `COPY (SELECT ...) TO STDOUT (FORMAT binary)` answers in CopyData messages
 * that `pg` hands over as bytes: the stored batches arrive as they are and
 * are copied once. COPY takes no parameters, so its statement is written with
 * integer literals (inlineIntegers); only integers are ever inlined.
 */

/**
 * Runs a `COPY (...) TO STDOUT (FORMAT binary)` statement on a pool, its
 * parameters integer arrays written in, and answers its rows, each field as
 * the bytes PostgreSQL sent.
 */
export async function copyRows(pool: Pool, availability: Availability, name: string, text: string, values: readonly (readonly number[])[]): Promise<(Buffer | null)[][]> {
  const mark = availability.begin();
  const started = performance.now();
  let data: Buffer[];
  try {
    data = await pool.query(new CopyOut(inlineIntegers(text, values)));
  } catch (e) {
    throw availability.translate(e);
  } finally {
    statementLatency(name).observe((performance.now() - started) / 1000);
  }
  availability.succeeded(mark);
  return binaryCopyRows(data);
}

/** A COPY ... TO STDOUT run on a pooled connection; resolves with every byte it sent. */
export class CopyOut implements Submittable<Buffer[]> {
  callback?: (error: Error | null, result?: Buffer[]) => void;
  /** The CopyData messages' bytes: PostgreSQL sends a row a message, so a batch is copied once, into a buffer of its own size. */
  private readonly chunks: Buffer[] = [];
  private answered = false;

  constructor(private readonly text: string) {}

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  /** The chunk is a view of the driver's read buffer, which it reuses: copied before the next message. */
  handleCopyData(message: { chunk: Buffer }): void {
    this.chunks.push(Buffer.from(message.chunk));
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}

  handleError(error: Error): void {
    this.answer(error);
  }

  handleReadyForQuery(): void {
    this.answer(null, this.chunks);
  }

  private answer(error: Error | null, result?: Buffer[]): void {
    if (this.answered) return;
    this.answered = true;
    this.callback?.(error, result);
  }
}

/** Replaces $1, $2, ... in `text` by array literals of integers (`'{1,2}'`); anything but safe integers is refused. */
export function inlineIntegers(text: string, values: readonly (readonly number[])[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const array = values[Number(n) - 1];
    if (array === undefined) throw new Error(`No value for $${n}.`);
    for (const v of array) if (!Number.isSafeInteger(v)) throw new Error(`Only integers are written into a COPY statement, not ${String(v)}.`);
    return `'{${array.join(',')}}'`;
  });
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * The rows of a binary COPY answer, each an array of its fields' bytes (null
 * for SQL NULL). The answer comes in the messages' chunks; a field inside
 * one chunk is a view of it, one across chunks is joined.
 */
export function binaryCopyRows(chunks: readonly Buffer[]): (Buffer | null)[][] {
  const data = new ChunkReader(chunks);
  if (!data.take(11).equals(SIGNATURE)) throw new Error('Not a binary COPY answer: its signature is missing.');
  data.take(4); // flags
  data.take(data.int32()); // the header extension, skipped
  const rows: (Buffer | null)[][] = [];
  for (;;) {
    const fields = data.take(2).readInt16BE(0);
    if (fields === -1) return rows;
    const row: (Buffer | null)[] = [];
    for (let i = 0; i < fields; i++) {
      const size = data.int32();
      row.push(size === -1 ? null : data.take(size));
    }
    rows.push(row);
  }
}

/** Reads across a list of chunks as if they were one buffer. */
class ChunkReader {
  private chunk = 0;
  private at = 0;

  constructor(private readonly chunks: readonly Buffer[]) {}

  int32(): number {
    return this.take(4).readInt32BE(0);
  }

  take(size: number): Buffer {
    if (size === 0) return Buffer.alloc(0);
    while (this.chunk < this.chunks.length && this.at === this.chunks[this.chunk]!.length) {
      this.chunk++;
      this.at = 0;
    }
    const current = this.chunks[this.chunk];
    if (current === undefined) throw new Error('A binary COPY answer ends early.');
    if (this.at + size <= current.length) {
      this.at += size;
      return current.subarray(this.at - size, this.at);
    }
    const joined = Buffer.allocUnsafe(size);
    for (let filled = 0; filled < size; ) {
      const from = this.chunks[this.chunk];
      if (from === undefined) throw new Error('A binary COPY answer ends inside a field.');
      const n = Math.min(size - filled, from.length - this.at);
      from.copy(joined, filled, this.at, this.at + n);
      filled += n;
      this.at += n;
      if (this.at === from.length) {
        this.chunk++;
        this.at = 0;
      }
    }
    return joined;
  }
}
