import { describe, expect, it } from 'vitest';
import { FrameSplitter } from '../../protocol/frame-splitter.js';

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

function collect(maxFrameBytes = 1024): { reader: FrameSplitter; frames: string[] } {
  const frames: string[] = [];
  return { reader: new FrameSplitter(maxFrameBytes, (f) => frames.push(f.toString())), frames };
}

describe('FrameSplitter', () => {
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
    const reader = new FrameSplitter(1024, (f) => kept.push(f));
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
    const reader = new FrameSplitter(1 << 20, (f) => kept.push(f));
    const stream = Buffer.concat([Buffer.alloc(4), body]);
    stream.writeInt32BE(body.length);
    for (let at = 0; at < stream.length; at += 7_001) reader.push(stream.subarray(at, at + 7_001));
    expect(kept).toHaveLength(1);
    expect(kept[0]!.equals(body)).toBe(true);
    expect(reader.inProgress).toBe(false);
  });

  it('a large frame in many chunks is held as what arrived and copied once, into a buffer of the size its prefix gave', () => {
    const body = Buffer.from(Array.from({ length: 4 * 1024 * 1024 }, (_, i) => (i * 7) % 256));
    const kept: Buffer[] = [];
    const reader = new FrameSplitter(8 << 20, (f) => kept.push(f));
    const stream = Buffer.concat([Buffer.alloc(4), body, framed('after')]);
    stream.writeInt32BE(body.length);
    let chunks = 0;
    for (let at = 0; at < stream.length; at += 1_500, chunks++) {
      reader.push(stream.subarray(at, at + 1_500));
      // What is held is exactly what arrived of the frame in progress: no spare capacity, no claimed size.
      expect(reader.heldBytes).toBe(reader.receivedBytes);
    }
    expect(chunks).toBeGreaterThan(2_000);
    expect(kept.map((f) => f.length)).toEqual([body.length, 5]);
    expect(kept[0]!.equals(body)).toBe(true);
    // Its own buffer, exactly its size: the chunks it came in can go, and nothing else shares its memory.
    expect(kept[0]!.byteOffset).toBe(0);
    expect(kept[0]!.buffer.byteLength).toBe(body.length);
    expect(kept[1]!.toString()).toBe('after');
  });

  it('reads a size prefix that arrives one byte at a time, and an empty frame', () => {
    const { reader, frames } = collect();
    for (const byte of framed('', 'four')) reader.push(Buffer.from([byte]));
    expect(frames).toEqual(['', 'four']);
    expect(reader.inProgress).toBe(false);
  });

  it('refuses a size above the maximum that arrives split across chunks, and reads nothing after', () => {
    const { reader, frames } = collect(16);
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(17);
    reader.push(prefix.subarray(0, 2));
    expect(() => reader.push(Buffer.concat([prefix.subarray(2), framed('late')]))).toThrow('frame size 17 exceeds the 16-byte maximum');
    reader.push(framed('ignored'));
    expect(frames).toEqual([]);
    expect(reader.inProgress).toBe(false);
  });

  it('refuses a frame below its minimum (an RPC frame holds at least its kind byte)', () => {
    const frames: string[] = [];
    const reader = new FrameSplitter(64, (f) => frames.push(f.toString()), { minFrameBytes: 1 });
    expect(() => reader.push(framed('k', ''))).toThrow('frame size 0 is below the 1-byte minimum');
    expect(frames).toEqual(['k']);
  });

  it('applies a maximum raised while a frame is handed out to the frames after it in the same chunk', () => {
    const frames: string[] = [];
    const reader = new FrameSplitter(8, (f) => {
      frames.push(f.toString());
      reader.maxFrameBytes = 64; // as a connection does once its peer has authenticated
    });
    reader.push(framed('hello', 'a frame longer than eight bytes'));
    expect(frames).toEqual(['hello', 'a frame longer than eight bytes']);
  });

  it('hands out nothing more once stopped from inside a frame', () => {
    const frames: string[] = [];
    const reader = new FrameSplitter(64, (f) => {
      frames.push(f.toString());
      reader.stop();
    });
    reader.push(framed('first', 'second'));
    reader.push(framed('third'));
    expect(frames).toEqual(['first']);
  });
});
