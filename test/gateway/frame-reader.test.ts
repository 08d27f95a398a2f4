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
});
