/**
 * A small Kafka client for gateway tests: requests built with the project's
 * own codecs, written back to back (pipelined) if the test likes, responses
 * read in arrival order, plus raw writes for hostile bytes.
 */
import { connect, type Socket } from 'node:net';
import type { Message } from '../../protocol/codec/compile.js';
import { decodeResponse, encodeRequestFrame } from '../../protocol/frames.js';
import { FrameSplitter } from '../../protocol/frame-splitter.js';

export interface Arrived {
  correlationId: number;
  frame: Buffer;
}

export class WireClient {
  private readonly arrived: Arrived[] = [];
  private wake: (() => void) | null = null;
  private nextCorrelationId = 1;
  private ended = false;
  /** Resolves when the socket has closed, from either side. */
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    const frames = new FrameSplitter(1 << 30, (frame) => {
      this.arrived.push({ correlationId: frame.readInt32BE(0), frame });
      this.wake?.();
    });
    socket.on('data', (chunk: Buffer) => frames.push(chunk));
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.ended = true;
        this.wake?.();
        resolve();
      }),
    );
  }

  static open(port: number, host = '127.0.0.1'): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      socket.once('connect', () => resolve(new WireClient(socket)));
      socket.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.ended;
  }

  /** Writes a request without waiting; returns its correlation id. */
  send(apiKey: number, apiVersion: number, body: Message): number {
    const correlationId = this.nextCorrelationId++;
    for (const chunk of encodeRequestFrame({ apiKey, apiVersion, correlationId, clientId: 'gateway-test' }, body)) this.socket.write(chunk);
    return correlationId;
  }

  /** Sends a request and decodes the next response, which must answer it. */
  async request(apiKey: number, apiVersion: number, body: Message, timeoutMs = 10_000): Promise<Message> {
    const correlationId = this.send(apiKey, apiVersion, body);
    const next = await this.next(timeoutMs);
    if (next.correlationId !== correlationId) throw new Error(`got the response to request ${next.correlationId}, expected ${correlationId}`);
    return decodeResponse(next.frame, apiKey, apiVersion).body;
  }

  /** The next response frame to arrive. */
  async next(timeoutMs = 10_000): Promise<Arrived> {
    const deadline = Date.now() + timeoutMs;
    while (this.arrived.length === 0) {
      if (this.ended) throw new Error('the connection closed before a response arrived');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.arrived.shift()!;
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A frame-size prefix followed by the given bytes (or nothing), for hostile input. */
export function sizePrefix(size: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(size);
  return Buffer.concat([prefix, body]);
}
