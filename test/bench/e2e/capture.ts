/**
 * Captured Produce requests: what a client actually sent, kept so the raw
 * PostgreSQL ceiling can write the very same batches.
 *
 * File format, one entry per Produce request, back to back:
 *   uint32 partition count, then per partition: uint32 partition, uint32 byte length, the batches.
 * All integers big-endian.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export interface CapturedPartition {
  partition: number;
  records: Buffer;
}

export type CapturedRequest = CapturedPartition[];

/** Keeps copies in memory (no disk I/O while the client is measured) and writes them out at close. */
export class CaptureWriter {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(
    private readonly path: string,
    private readonly maxBytes: number,
  ) {}

  write(request: CapturedRequest): void {
    if (this.bytes >= this.maxBytes || request.length === 0) return;
    const head = Buffer.alloc(4);
    head.writeUInt32BE(request.length);
    this.chunks.push(head);
    for (const p of request) {
      const prefix = Buffer.alloc(8);
      prefix.writeUInt32BE(p.partition, 0);
      prefix.writeUInt32BE(p.records.length, 4);
      this.chunks.push(prefix, Buffer.from(p.records));
      this.bytes += 8 + p.records.length;
    }
    this.bytes += 4;
  }

  close(): void {
    writeFileSync(this.path, Buffer.concat(this.chunks));
  }
}

export function readCapture(path: string): CapturedRequest[] {
  const file = readFileSync(path);
  const requests: CapturedRequest[] = [];
  let at = 0;
  while (at + 4 <= file.length) {
    const count = file.readUInt32BE(at);
    at += 4;
    const request: CapturedRequest = [];
    for (let i = 0; i < count; i++) {
      const partition = file.readUInt32BE(at);
      const length = file.readUInt32BE(at + 4);
      request.push({ partition, records: file.subarray(at + 8, at + 8 + length) });
      at += 8 + length;
    }
    requests.push(request);
  }
  return requests;
}
