import { describe, expect, it } from 'vitest';
import { FrameReader } from '../../src/gateway/frame-reader.js';

function framed(...bodies: string[]): Buffer {
  return Buffer.concat(
    bodies.map((body) => {
      const bytes = Buffer.from(body);
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(bytes.length);
      return Buffer.concat([prefix, bytes]);
    }),
  );
}

function collect(maxFrameBytes = 1024): { reader: FrameReader; frames: string[] } {
  const frames: string[] = [];
  return { reader: new FrameReader(maxFrameBytes, (f) => frames.push(f.toString())), frames };
}

describe('FrameReader', () => {
  it('yields the same frames however the stream is cut', () => {
    const stream = framed('first', '', 'a somewhat longer third frame', 'x');
    for (let cut = 1; cut < stream.length; cut++) {
      for (let second = cut; second <= stream.length; second++) {
        const { reader, frames } = collect();
        reader.push(stream.subarray(0, cut));
        reader.push(stream.subarray(cut, second));
        reader.push(stream.subarray(second));
        expect(frames).toEqual(['first', '', 'a somewhat longer third frame', 'x']);
      }
    }
  });

  it('never overwrites a frame it has handed out', () => {
    const kept: Buffer[] = [];
    const reader = new FrameReader(1024, (f) => kept.push(f));
    const stream = framed('alpha', 'bravo', 'charlie', 'delta');
    for (let i = 0; i < stream.length; i += 3) reader.push(stream.subarray(i, i + 3));
    expect(kept.map(String)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
  });

  it.each([
    ['above the maximum', 1025],
    ['negative', -1],
  ])('refuses a size %s before reading the frame', (_, size) => {
    const { reader, frames } = collect(1024);
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(size);
    expect(() => reader.push(Buffer.concat([framed('ok'), prefix]))).toThrow(/frame size/);
    expect(frames).toEqual(['ok']);
  });

  it('holds memory for the bytes that arrived, not for the size the prefix claims', () => {
    const { reader, frames } = collect(100 * 1024 * 1024);
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(100 * 1024 * 1024);
    reader.push(Buffer.concat([prefix, Buffer.from('ten bytes!')]));
    expect(reader.claimedSize).toBe(100 * 1024 * 1024);
    expect(reader.heldBytes).toBeLessThanOrEqual(4096);
    // Growing as it fills: never more than twice what came.
    for (let i = 0; i < 50; i++) {
      reader.push(Buffer.alloc(64 * 1024));
      expect(reader.heldBytes).toBeLessThanOrEqual(2 * reader.receivedBytes);
    }
    expect(frames).toEqual([]);
  });

  it('a frame assembled from many chunks is handed out whole and exact', () => {
    const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    const kept: Buffer[] = [];
    const reader = new FrameReader(1 << 20, (f) => kept.push(f));
    const stream = Buffer.concat([Buffer.alloc(4), body]);
    stream.writeInt32BE(body.length);
    for (let at = 0; at < stream.length; at += 7_001) reader.push(stream.subarray(at, at + 7_001));
    expect(kept).toHaveLength(1);
    expect(kept[0]!.equals(body)).toBe(true);
    expect(reader.inProgress).toBe(false);
  });
});
