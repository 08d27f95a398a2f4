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
  let data: Buffer;
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
export class CopyOut implements Submittable<Buffer> {
  callback?: (error: Error | null, result?: Buffer) => void;
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;
  private answered = false;

  constructor(private readonly text: string) {}

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text);
  }

  /** The chunk is a view of the driver's read buffer, which it reuses: copied before the next message. */
  handleCopyData(message: { chunk: Buffer }): void {
    const chunk = message.chunk;
    if (this.length + chunk.length > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + chunk.length));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.length);
    this.length += chunk.length;
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
    this.answer(null, this.buffer.subarray(0, this.length));
  }

  private answer(error: Error | null, result?: Buffer): void {
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
 * for SQL NULL); the fields are views of `data`.
 */
export function binaryCopyRows(data: Buffer): (Buffer | null)[][] {
  if (data.length < 19 || !data.subarray(0, 11).equals(SIGNATURE)) throw new Error('Not a binary COPY answer: its signature is missing.');
  let at = 15;
  at += 4 + data.readUInt32BE(at); // the header extension, skipped
  const rows: (Buffer | null)[][] = [];
  for (;;) {
    const fields = data.readInt16BE(at);
    at += 2;
    if (fields === -1) return rows;
    const row: (Buffer | null)[] = [];
    for (let i = 0; i < fields; i++) {
      const size = data.readInt32BE(at);
      at += 4;
      if (size === -1) {
        row.push(null);
        continue;
      }
      if (at + size > data.length) throw new Error('A binary COPY answer ends inside a field.');
      row.push(data.subarray(at, at + size));
      at += size;
    }
    rows.push(row);
  }
}
