/**
 * What the admin API tests share: a broker started through the library entry
 * with a node id other than 0 (so answers cannot pass by accident on a
 * default), a kafkajs admin client on it, a raw wire client for the versions
 * kafkajs lacks, and a way to read the Kafka error out of kafkajs's wrappers.
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { Message } from '../../protocol/codec/compile.js';
import { startBroker, type Broker } from '../../src/index.js';
import { WireClient } from './wire-client.js';

export const NODE_ID = 3;
export const CLUSTER_ID = 'admin-test-cluster';
export const DEFAULT_PARTITIONS = 3;

export interface AdminHarness {
  broker: Broker;
  kafka: Kafka;
  admin: Admin;
  wire: WireClient;
  /** A raw request on the shared wire connection; answers the decoded response body. */
  request(apiKey: number, apiVersion: number, body: Message): Promise<Message>;
  stop(): Promise<void>;
}

export async function startAdminHarness(): Promise<AdminHarness> {
  const broker = await startBroker({ nodeId: NODE_ID, clusterId: CLUSTER_ID, defaultPartitions: DEFAULT_PARTITIONS, autoCreateTopics: false });
  const kafka = new Kafka({ clientId: 'admin-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 50 } });
  const admin = kafka.admin();
  await admin.connect();
  const wire = await WireClient.open(broker.port, broker.host);
  return {
    broker,
    kafka,
    admin,
    wire,
    request: (apiKey, apiVersion, body) => wire.request(apiKey, apiVersion, body),
    async stop() {
      wire.destroy();
      await admin.disconnect();
      await broker.stop();
    },
  };
}

/**
 * The Kafka error types a kafkajs failure carries (KafkaJSProtocolError.type),
 * looking through its aggregate, per-partition and retry wrappers.
 */
export function kafkajsErrorTypes(e: unknown): string[] {
  const types: string[] = [];
  const visit = (x: unknown, depth: number): void => {
    if (!x || typeof x !== 'object' || depth > 5) return;
    const err = x as { type?: unknown; errors?: unknown[]; partitions?: { error?: unknown }[]; originalError?: unknown; cause?: unknown };
    if (typeof err.type === 'string') types.push(err.type);
    for (const inner of err.errors ?? []) visit(inner, depth + 1);
    for (const p of err.partitions ?? []) visit(p.error, depth + 1);
    visit(err.originalError, depth + 1);
    visit(err.cause, depth + 1);
  };
  visit(e, 0);
  return types;
}

/** Runs a kafkajs call that must fail, and answers the Kafka error types it failed with. */
export async function failureTypes(call: Promise<unknown>): Promise<string[]> {
  try {
    await call;
  } catch (e) {
    return kafkajsErrorTypes(e);
  }
  throw new Error('the call succeeded; a failure was expected');
}

/** A config entry by name from a decoded DescribeConfigs or CreateTopics result. */
export function configNamed(configs: Message[], name: string): Message {
  const found = configs.find((c) => c.name === name);
  if (!found) throw new Error(`no config ${name} among ${configs.map((c) => c.name as string).join(', ')}`);
  return found;
}
