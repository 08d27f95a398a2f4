/**
 * kafkajs 2.2.4 as the suites drive it: a client with quiet logs and quick
 * retries, and a producer call that sends the harness's records with their
 * partitions, keys, headers and timestamps. kafkajs consumers need consumer
 * groups (a later issue), so suites read kafkajs's records back with
 * librdkafka or kcat.
 */
import kafkajs, { type CompressionTypes as CompressionType, type IHeaders, type Kafka as KafkaClient, type Producer, type ProducerConfig, type RecordMetadata } from 'kafkajs';
import { compress, CompressionCodec, decompress, type CompressionCodec as ProtocolCodec } from '../../protocol/records/compression.js';

// kafkajs is CommonJS; Node's ESM loader does not see all of its named exports.
const { CompressionCodecs, CompressionTypes, Kafka, logLevel } = kafkajs;
import type { Header, SentRecord } from './records.js';

export interface KafkajsLogEntry {
  level: number;
  message: string;
}

export interface KafkajsClientOptions {
  clientId?: string;
  /** Retries per operation; kafkajs retries retriable broker errors this often. Default 20. */
  retries?: number;
  /** Collects kafkajs's warnings and errors when given. */
  logs?: KafkajsLogEntry[];
}

export function kafkajsClient(bootstrap: string, options: KafkajsClientOptions = {}): KafkaClient {
  const { clientId = 'queen-e2e-kafkajs', retries = 20, logs } = options;
  return new Kafka({
    clientId,
    brokers: [bootstrap],
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 50, maxRetryTime: 1_000, retries },
    logLevel: logs ? logLevel.WARN : logLevel.NOTHING,
    logCreator: () => (entry) => {
      logs?.push({ level: entry.level, message: `${entry.log.message} ${JSON.stringify(entry.log)}` });
    },
  });
}

export function toKafkajsHeaders(headers: Header[]): IHeaders {
  const out: IHeaders = {};
  for (const [name, value] of headers) {
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = Array.isArray(existing) ? [...existing, value] : [existing as string, value];
  }
  return out;
}

export interface KafkajsSendOptions {
  acks?: number;
  compression?: CompressionType;
  /** Records per send call; each call is one Produce request per broker. */
  chunk?: number;
}

/** Sends the records in chunks; resolves with kafkajs's per-partition results. */
export async function kafkajsSend(producer: Producer, topic: string, records: readonly SentRecord[], options: KafkajsSendOptions = {}): Promise<RecordMetadata[]> {
  const chunk = options.chunk ?? records.length;
  const results: RecordMetadata[] = [];
  for (let i = 0; i < records.length; i += chunk) {
    const part = records.slice(i, i + chunk);
    const metadata = await producer.send({
      topic,
      acks: options.acks ?? -1,
      ...(options.compression === undefined ? {} : { compression: options.compression }),
      messages: part.map((r) => ({
        partition: r.partition,
        key: r.key,
        value: r.value,
        headers: toKafkajsHeaders(r.headers),
        timestamp: String(r.timestamp),
      })),
    });
    results.push(...metadata);
  }
  return results;
}

export async function connectKafkajsProducer(kafka: KafkaClient, config: ProducerConfig = {}): Promise<Producer> {
  const producer = kafka.producer({ allowAutoTopicCreation: false, ...config });
  await producer.connect();
  return producer;
}

/**
 * kafkajs ships gzip only; users add snappy, lz4 and zstd with codec
 * packages. These register the same kind of plugin, built on the project's
 * own codecs (protocol/records/compression), so kafkajs can write and read
 * every codec Kafka has.
 */
export function registerKafkajsCodecs(): void {
  const plugin = (codec: ProtocolCodec) => () => ({
    async compress(encoder: { buffer: Buffer }) {
      return compress(codec, encoder.buffer);
    },
    async decompress(buffer: Buffer) {
      return decompress(codec, buffer);
    },
  });
  CompressionCodecs[CompressionTypes.Snappy] = plugin(CompressionCodec.Snappy);
  CompressionCodecs[CompressionTypes.LZ4] = plugin(CompressionCodec.Lz4);
  CompressionCodecs[CompressionTypes.ZSTD] = plugin(CompressionCodec.Zstd);
}
