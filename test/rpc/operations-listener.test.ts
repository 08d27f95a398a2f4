/**
 * The split layout's processes each answer /metrics, /health and /ready on
 * their operations listener (--metrics-port): the `core` command, which has
 * no HTTP API, and `gateway --core --no-http`. Both run as the real binary;
 * Kafka traffic goes through a kafkajs producer, so the gateway's Kafka
 * series move, the RPC is counted on both ends of the hop, and the core's
 * figures (offsets, depth) are read from the core itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/eventually.js';
import { freePort } from '../support/gateway.js';
import { connectKafkajsProducer, kafkajsClient } from '../support/kafkajs.js';
import { scrape } from '../support/prometheus.js';
import { uniqueTopic } from '../support/records.js';

const BIN = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));
const SECRET = 'operations-listener-secret';

interface Child {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const children: Child[] = [];
afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
});

function start(args: string[]): Child {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('QUEEN_')) delete env[name];
  const child = spawn(process.execPath, [BIN, ...args, '--rpc-secret', SECRET, '--log-level', 'warn'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const running = { process: child, output: () => output, exited };
  children.push(running);
  return running;
}

async function answers(url: string): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(url);
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

async function waitUntilReady(base: string, child: Child, who: string): Promise<void> {
  await waitFor(async () => (await answers(`${base}/ready`)).status === 200, {
    what: `${who}'s /ready answering 200`,
    timeoutMs: 60_000,
    intervalMs: 200,
    describe: () => `its output so far: ${child.output().slice(-1_000)}`,
  });
}

describe('operations listener of the split layout (core, gateway --core)', () => {
  it('the core and a gateway each serve /metrics, /health and /ready; Kafka traffic moves both', async () => {
    const [rpcPort, coreOps, kafkaPort, gatewayOps] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const core = start(['core', '--rpc-port', String(rpcPort), '--metrics-port', String(coreOps)]);
    const coreBase = `http://127.0.0.1:${coreOps}`;
    await waitUntilReady(coreBase, core, 'the core');
    expect(JSON.parse((await answers(`${coreBase}/health`)).body)).toEqual({ status: 'healthy' });
    const unknown = await answers(`${coreBase}/nothing`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatch(/serves GET \/metrics, \/health and \/ready only\./);

    const gateway = start(['gateway', '--core', `127.0.0.1:${rpcPort}`, '--port', String(kafkaPort), '--no-http', '--no-auto-create-topics', '--metrics-port', String(gatewayOps)]);
    const gatewayBase = `http://127.0.0.1:${gatewayOps}`;
    await waitUntilReady(gatewayBase, gateway, 'the gateway');
    const coreBefore = await scrape(`${coreBase}/metrics`);
    const gatewayBefore = await scrape(`${gatewayBase}/metrics`);

    const kafka = kafkajsClient(`127.0.0.1:${kafkaPort}`);
    const admin = kafka.admin();
    await admin.connect();
    const topic = uniqueTopic('split-metered');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const producer = await connectKafkajsProducer(kafka);
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 30 }, (_, i) => ({ value: `r${i}` })) });
    await producer.disconnect();
    await admin.disconnect();

    // The gateway counts the Kafka side and its own RPC round trips.
    const atGateway = await scrape(`${gatewayBase}/metrics`);
    expect(atGateway.sum('kafka_server_brokertopicmetrics_messagesin_total', { topic })).toBe(30);
    expect(atGateway.sum('kafka_network_requestmetrics_requests_total', { request: 'Produce' }) - gatewayBefore.sum('kafka_network_requestmetrics_requests_total', { request: 'Produce' })).toBe(1);
    expect(atGateway.sum('queen_rpc_client_calls_total', { method: 'append', outcome: 'ok' }) - gatewayBefore.sum('queen_rpc_client_calls_total', { method: 'append', outcome: 'ok' })).toBe(1);
    expect(atGateway.sum('kafka_topic_partition_current_offset', { topic })).toBe(30);
    expect(atGateway.has('nodejs_eventloop_lag_seconds')).toBe(true);

    // The core counts the calls it served, and reads its own figures.
    const atCore = await scrape(`${coreBase}/metrics`);
    expect(atCore.sum('queen_rpc_server_calls_total', { method: 'append', outcome: 'ok' }) - coreBefore.sum('queen_rpc_server_calls_total', { method: 'append', outcome: 'ok' })).toBe(1);
    expect(atCore.sum('queen_rpc_server_call_duration_seconds_count', { method: 'append' })).toBeGreaterThanOrEqual(1);
    expect(atCore.sum('kafka_topic_partition_current_offset', { topic, partition: '0' })).toBe(30);
    expect(atCore.sum('queen_queue_depth_messages', { queue: topic })).toBe(30);
    expect(atCore.has('process_resident_memory_bytes')).toBe(true);
    // The core serves no Kafka clients: it has no Kafka request series.
    expect(atCore.has('kafka_network_requestmetrics_requests_total')).toBe(false);

    gateway.process.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    core.process.kill('SIGTERM');
    expect(await core.exited).toBe(0);
  }, 180_000);

  it('a metrics port already taken stops the core with a sentence naming --metrics-port', async () => {
    const [rpcPort, taken] = await Promise.all([freePort(), freePort()]);
    const holder = start(['core', '--rpc-port', String(await freePort()), '--metrics-port', String(taken)]);
    await waitUntilReady(`http://127.0.0.1:${taken}`, holder, 'the first core');
    const second = start(['core', '--rpc-port', String(rpcPort), '--metrics-port', String(taken)]);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`Port ${taken} on 127.0.0.1 (--metrics-port) is already in use; stop whatever holds it or choose another with --metrics-port.`);
    holder.process.kill('SIGTERM');
    expect(await holder.exited).toBe(0);
  }, 120_000);
});
