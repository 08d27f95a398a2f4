/**
 * The source topics' configs, which librdkafka's Node.js binding cannot read
 * (it has no DescribeConfigs): one DescribeConfigs v1 request per topic over
 * the project's own protocol codecs, on a plain or TLS connection to the
 * first bootstrap broker that answers. Only configs set on the topic
 * (DYNAMIC_TOPIC_CONFIG) are returned: the rest are the source broker's
 * defaults, which the target's own defaults stand in for. A SASL source is not
 * spoken to here (the bridge's copy of records and offsets goes through
 * librdkafka, which does SASL); its topics are created with the target's
 * defaults, and the caller says so.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { readFileSync } from 'node:fs';
import { encodeRequestFrame, decodeResponse } from '../../protocol/frames.js';
import type { Message } from '../../protocol/codec/compile.js';

const DESCRIBE_CONFIGS = 32;
const VERSION = 1;
const TOPIC_RESOURCE = 2;
const DYNAMIC_TOPIC_CONFIG = 1;
const TIMEOUT_MS = 10_000;

export interface SourceConfigReader {
  /** Configs set on the topic, by name; null when the source cannot be asked (SASL), saying why in `unavailable`. */
  topicConfigs(topic: string): Promise<Record<string, string> | null>;
  readonly unavailable: string | null;
  close(): void;
}

/** What to dial, from the bootstrap list and the librdkafka security settings the bridge was given. */
export function sourceConfigReader(bootstrap: string, options: Readonly<Record<string, string>>): SourceConfigReader {
  const protocol = (options['security.protocol'] ?? 'plaintext').toLowerCase();
  if (protocol.startsWith('sasl')) {
    return {
      unavailable: `the source uses ${protocol}, which the bridge's config reader does not speak; topics are created with the target's defaults (set their configs on the target by hand)`,
      topicConfigs: async () => null,
      close: () => {},
    };
  }
  const brokers = bootstrap.split(',').map((b) => b.trim()).filter(Boolean);
  let connection: Connection | null = null;
  const open = async (): Promise<Connection> => {
    if (connection && !connection.closed) return connection;
    let last: Error | null = null;
    for (const broker of brokers) {
      try {
        connection = await Connection.open(broker, protocol === 'ssl' ? tlsOptions(options) : null);
        return connection;
      } catch (e) {
        last = e as Error;
      }
    }
    throw new Error(`no bootstrap broker of ${bootstrap} answered (${last?.message ?? 'none given'})`);
  };
  return {
    unavailable: null,
    async topicConfigs(topic: string) {
      const conn = await open();
      const body = await conn.request({ resources: [{ resourceType: TOPIC_RESOURCE, resourceName: topic, configurationKeys: null }], includeSynonyms: false });
      const result = (body['results'] as Message[])[0]!;
      if ((result['errorCode'] as number) !== 0) throw new Error(`DescribeConfigs for topic ${topic} answered error ${result['errorCode']}: ${result['errorMessage'] ?? ''}`);
      const configs: Record<string, string> = {};
      for (const c of result['configs'] as Message[]) {
        if (c['configSource'] === DYNAMIC_TOPIC_CONFIG && typeof c['value'] === 'string') configs[c['name'] as string] = c['value'];
      }
      return configs;
    },
    close() {
      connection?.socket.destroy();
    },
  };
}

function tlsOptions(options: Readonly<Record<string, string>>): Record<string, unknown> {
  const file = (key: string) => (options[key] ? readFileSync(options[key]) : undefined);
  return {
    ca: file('ssl.ca.location'),
    cert: file('ssl.certificate.location'),
    key: file('ssl.key.location'),
    passphrase: options['ssl.key.password'],
    rejectUnauthorized: options['enable.ssl.certificate.verification'] !== 'false',
  };
}

class Connection {
  private buffered = Buffer.alloc(0);
  private correlationId = 1;
  private waiting: { resolve: (frame: Buffer) => void; reject: (e: Error) => void } | null = null;
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      if (this.buffered.length >= 4 && this.buffered.length >= 4 + this.buffered.readInt32BE(0)) {
        const frame = this.buffered.subarray(4, 4 + this.buffered.readInt32BE(0));
        this.buffered = this.buffered.subarray(4 + frame.length);
        this.waiting?.resolve(frame);
        this.waiting = null;
      }
    });
    const fail = (e: Error) => {
      this.closed = true;
      this.waiting?.reject(e);
      this.waiting = null;
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('the source broker closed the connection')));
  }

  static open(broker: string, tls: Record<string, unknown> | null): Promise<Connection> {
    const at = broker.lastIndexOf(':');
    const host = broker.slice(0, at).replace(/^\[|\]$/g, '');
    const port = Number(broker.slice(at + 1));
    return new Promise((resolve, reject) => {
      const socket = tls ? connectTls({ host, port, servername: host, ...tls }) : connectTcp(port, host);
      const timer = setTimeout(() => socket.destroy(new Error(`connecting to ${broker} timed out`)), TIMEOUT_MS);
      socket.once(tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        resolve(new Connection(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  async request(body: Message): Promise<Message> {
    const correlationId = this.correlationId++;
    const frame = new Promise<Buffer>((resolve, reject) => {
      this.waiting = { resolve, reject };
      setTimeout(() => reject(new Error('the source broker did not answer DescribeConfigs in time')), TIMEOUT_MS).unref();
    });
    for (const chunk of encodeRequestFrame({ apiKey: DESCRIBE_CONFIGS, apiVersion: VERSION, correlationId, clientId: 'queen-bridge' }, body)) this.socket.write(chunk);
    return decodeResponse(await frame, DESCRIBE_CONFIGS, VERSION).body;
  }
}
