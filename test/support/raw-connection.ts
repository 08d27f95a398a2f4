/**
 * A bare TCP connection to the gateway for tests that speak bytes rather than
 * a client library: well-formed requests built with the project's own codecs
 * (to prove the connection works), and anything hostile the test writes.
 */
import { connect, type Socket } from 'node:net';
import { encodeRequestFrame, decodeResponse } from '../../protocol/frames.js';
import type { Message } from '../../protocol/codec/compile.js';

export class RawConnection {
  private buffered = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private waiting: (() => void) | null = null;
  private correlationId = 1;
  /** Resolves when the gateway (or anything) has closed the socket. */
  readonly closed: Promise<void>;
  private isClosed = false;
  /** This end's port: how the gateway's log names the connection (remote 127.0.0.1:<port>). Kept, since a closed socket forgets it. */
  readonly localPort: number;

  private constructor(private readonly socket: Socket) {
    this.localPort = socket.localPort ?? -1;
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 4) {
        const size = this.buffered.readInt32BE(0);
        if (this.buffered.length < 4 + size) break;
        this.frames.push(this.buffered.subarray(4, 4 + size));
        this.buffered = this.buffered.subarray(4 + size);
      }
      this.waiting?.();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.isClosed = true;
        this.waiting?.();
        resolve();
      }),
    );
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Half-closes this end (FIN), as a client that stops mid-frame would. */
  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Sends one well-formed request and resolves with the decoded response body. */
  async request(apiKey: number, apiVersion: number, body: Message, timeoutMs = 10_000): Promise<Message> {
    const correlationId = this.correlationId++;
    for (const chunk of encodeRequestFrame({ apiKey, apiVersion, correlationId, clientId: 'queen-e2e-raw' }, body)) this.socket.write(chunk);
    const frame = await this.nextFrame(timeoutMs, `the response to API key ${apiKey} v${apiVersion}`);
    const response = decodeResponse(frame, apiKey, apiVersion);
    if (response.correlationId !== correlationId) throw new Error(`response correlation id ${response.correlationId}, expected ${correlationId}`);
    return response.body;
  }

  /** Reads the next response frame as the answer to a request of this key and version the test wrote itself. */
  async readResponse(apiKey: number, apiVersion: number, timeoutMs = 10_000): Promise<{ correlationId: number; body: Message }> {
    const frame = await this.nextFrame(timeoutMs, `a response to API key ${apiKey} v${apiVersion}`);
    return decodeResponse(frame, apiKey, apiVersion);
  }

  /** The next frame as bytes, undecoded (a bare SASL token after SaslHandshake v0). */
  readFrame(timeoutMs = 10_000): Promise<Buffer> {
    return this.nextFrame(timeoutMs, 'a frame');
  }

  /** Response frames received and not yet read. */
  get unreadFrames(): number {
    return this.frames.length;
  }

  private async nextFrame(timeoutMs: number, what: string): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length === 0) {
      if (this.isClosed) throw new Error(`the connection closed before ${what} arrived`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = null;
    }
    return this.frames.shift()!;
  }

  /** Resolves once the socket is closed; fails, naming `what`, if it is still open after `timeoutMs`. */
  async expectClosed(timeoutMs: number, what: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the gateway kept the connection open ${timeoutMs} ms after ${what}`)), timeoutMs);
    });
    try {
      await Promise.race([this.closed, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A frame: the 4-byte size prefix (of `body` unless `declaredSize` says otherwise) and the body. */
export function frame(body: Buffer, declaredSize = body.length): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(declaredSize | 0);
  return Buffer.concat([size, body]);
}

/** A request header v1 (key, version, correlation id, client id) as bytes, for hand-built frames. */
export function requestHeaderBytes(apiKey: number, apiVersion: number, correlationId: number, clientId = 'hostile'): Buffer {
  const id = Buffer.from(clientId);
  const header = Buffer.alloc(10 + id.length);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(apiVersion, 2);
  header.writeInt32BE(correlationId, 4);
  header.writeInt16BE(id.length, 8);
  id.copy(header, 10);
  return header;
}

/** The bytes of a well-formed request frame, size prefix included. */
export function requestFrameBytes(apiKey: number, apiVersion: number, body: Message, correlationId = 99): Buffer {
  return Buffer.concat(encodeRequestFrame({ apiKey, apiVersion, correlationId, clientId: 'hostile' }, body));
}
