/**
 * The null broker: the client's ceiling. A Kafka broker built from this
 * project's protocol layer (frames, codecs, the gateway's frame reader) that
 * answers ApiVersions, Metadata, InitProducerId and Produce and stores
 * nothing. Produce is acknowledged with offsets counted per partition, so a
 * producer runs exactly as it would against a broker; nothing is kept, so
 * whatever rate a client reaches here is the most it can reach anywhere.
 *
 * A topic exists with the partition count its name ends in (`…-p64`), so no
 * CreateTopics is needed. With `--capture FILE` the first Produce requests'
 * partition payloads (up to `--capture-bytes`) are written to FILE, for the
 * raw PostgreSQL ceiling to replay the very batches this client sent
 * (format in ./capture.ts).
 *
 * Child-process entry: prints `{"listening":"127.0.0.1:PORT"}` on stdout; SIGUSR2 writes the
 * capture and prints `{"captured":FILE}`; ends on SIGTERM.
 */
import { createServer, type Socket } from 'node:net';
import { ApiKey } from '../../../protocol/api-keys.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { decodeRequest, encodeResponseFrame } from '../../../protocol/frames.js';
import { decodeRequestHeader } from '../../../protocol/headers.js';
import { Reader } from '../../../protocol/primitives/reader.js';
import { BatchPos, BATCH_LENGTH_PREFIX } from '../../../protocol/records/batch-header.js';
import { FrameSplitter } from '../../../protocol/frame-splitter.js';
import { handlers } from '../../../src/gateway/handlers/index.js';
import { HandlerRegistry } from '../../../src/gateway/registry.js';
import { CaptureWriter, type CapturedPartition } from './capture.js';

const NODE_ID = 0;
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * The gateway's own ApiVersions list, so clients pick the same request
 * versions and features against both. Advertising only the four APIs
 * answered here would not do: librdkafka derives features from the whole
 * list (without Fetch v4+ it falls back to the legacy message format).
 */
const registry = new HandlerRegistry(handlers);
const advertised = registry.advertised;

function partitionsOf(topic: string): number {
  const match = /-p(\d+)$/.exec(topic);
  return match ? Number(match[1]) : 1;
}

/** Records in a partition's batches, read from each v2 batch header (lastOffsetDelta + 1). */
function recordCount(records: Buffer): number {
  let count = 0;
  for (let at = 0; at + BatchPos.RecordCount <= records.length; ) {
    count += records.readInt32BE(at + BatchPos.LastOffsetDelta) + 1;
    at += BATCH_LENGTH_PREFIX + records.readInt32BE(at + BatchPos.BatchLength);
  }
  return count;
}

const capturePath = argument('capture');
const capture = capturePath ? new CaptureWriter(capturePath, Number(argument('capture-bytes') ?? 32 << 20)) : null;
const nextOffsets = new Map<string, number>();
let nextProducerId = 1000n;
let address = { host: '127.0.0.1', port: 0 };

type Body = Record<string, any>;

function answer(apiKey: number, version: number, body: Body): Body | null {
  switch (apiKey) {
    case ApiKey.ApiVersions:
      return { errorCode: 0, apiKeys: advertised, throttleTimeMs: 0, supportedFeatures: [], finalizedFeaturesEpoch: -1n, finalizedFeatures: [], zkMigrationReady: false };
    case ApiKey.Metadata: {
      const asked: { name: string | null }[] = body.topics ?? [];
      return {
        throttleTimeMs: 0,
        brokers: [{ nodeId: NODE_ID, host: address.host, port: address.port, rack: null }],
        clusterId: 'null-broker',
        controllerId: NODE_ID,
        topics: asked.map((t) => ({
          errorCode: 0,
          name: t.name,
          topicId: ZERO_UUID,
          isInternal: false,
          partitions: Array.from({ length: partitionsOf(t.name ?? '') }, (_, i) => ({
            errorCode: 0, partitionIndex: i, leaderId: NODE_ID, leaderEpoch: 0, replicaNodes: [NODE_ID], isrNodes: [NODE_ID], offlineReplicas: [],
          })),
        })),
      };
    }
    case ApiKey.InitProducerId:
      return { throttleTimeMs: 0, errorCode: 0, producerId: nextProducerId++, producerEpoch: 0 };
    case ApiKey.Produce: {
      const captured: CapturedPartition[] = [];
      const responses = body.topicData.map((topic: Body) => ({
        name: topic.name,
        partitionResponses: topic.partitionData.map((p: Body) => {
          const records: Buffer = p.records ?? Buffer.alloc(0);
          const key = `${topic.name}\0${p.index}`;
          const baseOffset = nextOffsets.get(key) ?? 0;
          nextOffsets.set(key, baseOffset + recordCount(records));
          captured.push({ partition: p.index, records });
          return { index: p.index, errorCode: 0, errorMessage: null, baseOffset, logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [] };
        }),
      }));
      capture?.write(captured);
      return body.acks === 0 ? null : { responses, throttleTimeMs: 0 };
    }
  }
  throw new Error(`the null broker does not serve API key ${apiKey} v${version}`);
}

function serve(socket: Socket): void {
  socket.setNoDelay(true);
  const frames = new FrameSplitter(100 << 20, (frame) => {
    const asked = decodeRequestHeader(new Reader(frame));
    // As the gateway does: an ApiVersions newer than ours (the Java client's v5) gets the v0 answer
    // UNSUPPORTED_VERSION with our list, and the client asks again at a version from it.
    if (asked.apiKey === ApiKey.ApiVersions && !registry.lookup(asked.apiKey, asked.apiVersion)) {
      for (const chunk of encodeResponseFrame(ApiKey.ApiVersions, 0, asked.correlationId, { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: advertised })) socket.write(chunk);
      return;
    }
    const { header, body } = decodeRequest(frame);
    const response = answer(header.apiKey, header.apiVersion, body);
    if (response === null) return;
    for (const chunk of encodeResponseFrame(header.apiKey, header.apiVersion, header.correlationId, response)) socket.write(chunk);
  });
  socket.on('data', (chunk: Buffer) => {
    try {
      frames.push(chunk);
    } catch (e) {
      process.stderr.write(`null broker: ${(e as Error).message}; closing the connection (${chunk.subarray(0, 64).toString('hex')})\n`);
      socket.destroy();
    }
  });
  socket.on('error', () => socket.destroy());
}

const server = createServer(serve);
server.listen(0, '127.0.0.1', () => {
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('the null broker has no TCP address');
  address = { host: '127.0.0.1', port: bound.port };
  process.stdout.write(JSON.stringify({ listening: `127.0.0.1:${bound.port}` }) + '\n');
});
// SIGUSR2 writes the capture out and says so (the runner then stops this process).
process.on('SIGUSR2', () => {
  capture?.close();
  process.stdout.write(JSON.stringify({ captured: capturePath ?? null }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
