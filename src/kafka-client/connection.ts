/**
 * One connection to one Kafka-protocol broker, over the project's own codecs
 * (protocol/): TCP or TLS, ApiVersions asked first so each request goes at a
 * version both ends speak, then SASL when the settings ask for it. Requests
 * are pipelined (each answered by its correlation id); a connection that
 * fails rejects what is out and is not used again (the client dials anew).
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { FrameSplitter } from '../../protocol/frame-splitter.js';
import { decodeResponse, encodeRequestFrame } from '../../protocol/frames.js';
import { KafkaConnectionError } from './errors.js';
import { authenticate } from './sasl.js';
import type { ClientSecurity } from './settings.js';

/** The version each API is asked at when the broker speaks it, and the lowest one this client can write. */
const VERSIONS: Readonly<Record<number, { preferred: number; lowest: number }>> = {
  [ApiKey.Fetch]: { preferred: 12, lowest: 4 },
  [ApiKey.ListOffsets]: { preferred: 7, lowest: 2 },
  [ApiKey.Metadata]: { preferred: 12, lowest: 4 },
  [ApiKey.OffsetFetch]: { preferred: 8, lowest: 8 },
  [ApiKey.FindCoordinator]: { preferred: 4, lowest: 4 },
  [ApiKey.ListGroups]: { preferred: 4, lowest: 1 },
  [ApiKey.SaslHandshake]: { preferred: 1, lowest: 1 },
  [ApiKey.SaslAuthenticate]: { preferred: 2, lowest: 0 },
  [ApiKey.DescribeConfigs]: { preferred: 4, lowest: 1 },
  // The transactional producer (producer.ts) and the admin calls (admin.ts). Produce v12 and EndTxn v5
  // would mean transaction version 2; this client runs the version 1 protocol (AddPartitionsToTxn first).
  [ApiKey.Produce]: { preferred: 11, lowest: 3 },
  [ApiKey.InitProducerId]: { preferred: 4, lowest: 3 },
  [ApiKey.AddPartitionsToTxn]: { preferred: 3, lowest: 0 },
  [ApiKey.EndTxn]: { preferred: 4, lowest: 0 },
  [ApiKey.CreateTopics]: { preferred: 7, lowest: 2 },
  [ApiKey.CreatePartitions]: { preferred: 3, lowest: 0 },
  [ApiKey.OffsetCommit]: { preferred: 9, lowest: 2 },
};

const API_VERSIONS_VERSION = 3;
/** The largest response frame taken: a fetch answer is bounded by the request's MaxBytes, plus one oversized batch. */
const MAX_FRAME_BYTES = 256 * 1024 * 1024;

interface Outstanding {
  apiKey: number;
  version: number;
  resolve: (body: Message) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export interface ConnectOptions {
  host: string;
  port: number;
  security: ClientSecurity;
  clientId: string;
  timeoutMs: number;
}

export class BrokerConnection {
  private readonly outstanding = new Map<number, Outstanding>();
  private readonly versions = new Map<number, number>();
  private correlationId = 1;
  private failure: Error | null = null;
  private readonly splitter: FrameSplitter;

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
    private readonly clientId: string,
    private readonly timeoutMs: number,
  ) {
    this.splitter = new FrameSplitter(MAX_FRAME_BYTES, (frame) => this.answer(frame));
    socket.on('data', (chunk: Buffer) => {
      try {
        this.splitter.push(chunk);
      } catch (e) {
        this.fail(new KafkaConnectionError(`${address} sent a frame this client cannot read: ${(e as Error).message}`));
      }
    });
    socket.on('error', (e) => this.fail(new KafkaConnectionError(`the connection to ${address} failed: ${e.message}`)));
    socket.on('close', () => this.fail(new KafkaConnectionError(`${address} closed the connection`)));
  }

  /** Dials, asks ApiVersions and logs in (SASL) when the settings say so. */
  static async open(options: ConnectOptions): Promise<BrokerConnection> {
    const address = `${options.host}:${options.port}`;
    const socket = await dial(options, address);
    const connection = new BrokerConnection(socket, address, options.clientId, options.timeoutMs);
    try {
      await connection.negotiate();
      if (options.security.sasl) await authenticate((apiKey, body) => connection.request(apiKey, body), address, options.security.sasl);
    } catch (e) {
      connection.close();
      throw e;
    }
    return connection;
  }

  get closed(): boolean {
    return this.failure !== null;
  }

  /** The version this connection asks `apiKey` at; throws when the broker speaks none this client can write. */
  version(apiKey: number): number {
    const v = this.versions.get(apiKey);
    if (v === undefined) throw new KafkaConnectionError(`${this.address} does not serve API key ${apiKey} at a version this client speaks (${VERSIONS[apiKey]?.lowest ?? '?'}+)`);
    return v;
  }

  /** Sends a request at the negotiated version; resolves with the decoded response body. */
  request(apiKey: number, body: Message, timeoutMs = this.timeoutMs): Promise<Message> {
    return this.send(apiKey, this.version(apiKey), body, timeoutMs);
  }

  send(apiKey: number, version: number, body: Message, timeoutMs = this.timeoutMs): Promise<Message> {
    if (this.failure) return Promise.reject(this.failure);
    const correlationId = this.correlationId++;
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new KafkaConnectionError(`${this.address} did not answer API key ${apiKey} within ${timeoutMs} ms`)), timeoutMs);
      this.outstanding.set(correlationId, { apiKey, version, resolve, reject, timer });
      for (const chunk of encodeRequestFrame({ apiKey, apiVersion: version, correlationId, clientId: this.clientId }, body)) this.socket.write(chunk);
    });
  }

  close(): void {
    this.fail(new KafkaConnectionError(`the connection to ${this.address} was closed`));
  }

  private async negotiate(): Promise<void> {
    const answer = await this.send(ApiKey.ApiVersions, API_VERSIONS_VERSION, { clientSoftwareName: 'queen-gateway', clientSoftwareVersion: '1' });
    if (answer['errorCode'] !== 0) throw new KafkaConnectionError(`${this.address} answered ApiVersions with error ${answer['errorCode']}`);
    for (const a of answer['apiKeys'] as Message[]) {
      const wanted = VERSIONS[a['apiKey'] as number];
      if (!wanted) continue;
      const v = Math.min(wanted.preferred, a['maxVersion'] as number);
      if (v >= wanted.lowest && v >= (a['minVersion'] as number)) this.versions.set(a['apiKey'] as number, v);
    }
  }

  private answer(frame: Buffer): void {
    const correlationId = frame.readInt32BE(0);
    const waiting = this.outstanding.get(correlationId);
    if (!waiting) return this.fail(new KafkaConnectionError(`${this.address} answered correlation id ${correlationId}, which no request is waiting for`));
    this.outstanding.delete(correlationId);
    clearTimeout(waiting.timer);
    try {
      waiting.resolve(decodeResponse(frame, waiting.apiKey, waiting.version).body);
    } catch (e) {
      waiting.reject(new KafkaConnectionError(`${this.address}'s answer to API key ${waiting.apiKey} v${waiting.version} does not decode: ${(e as Error).message}`));
    }
  }

  private fail(e: Error): void {
    if (this.failure) return;
    this.failure = e;
    this.splitter.stop();
    this.socket.destroy();
    for (const w of this.outstanding.values()) {
      clearTimeout(w.timer);
      w.reject(e);
    }
    this.outstanding.clear();
  }
}

function dial(options: ConnectOptions, address: string): Promise<Socket> {
  const { host, port, security, timeoutMs } = options;
  return new Promise((resolve, reject) => {
    const socket = security.tls ? connectTls({ host, port, servername: host, ...security.tls }) : connectTcp(port, host);
    socket.setNoDelay(true);
    const timer = setTimeout(() => socket.destroy(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
    socket.once(security.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      socket.on('error', () => {}); // the connection's own listener takes over
      resolve(socket);
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(new KafkaConnectionError(`could not connect to ${address}: ${e.message}`));
    });
  });
}
