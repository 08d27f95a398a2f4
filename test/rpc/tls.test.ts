/**
 * The RPC over mutual TLS, with real processes: `queen-gateway core` with
 * --rpc-tls-* files and `queen-gateway gateway --core` with its own client
 * certificate. A Kafka client works through the pair; a gateway whose
 * certificate comes from another CA, and a peer with no certificate, are
 * refused with a sentence and logged by the core; renewed certificates are
 * picked up without a restart of the side that holds them (the core's for new
 * connections, a gateway's on its next connection). With both TLS and a
 * secret on the core, a gateway must pass both. The migration bridge reaches
 * the same core with a certificate of its own. Certificates are made at test
 * time (test/support/certificates.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker } from '../../src/index.js';
import { connectCore } from '../../src/rpc/index.js';
import { TlsCredentials } from '../../src/tls/credentials.js';
import { makeTestPki, type TestPki } from '../support/certificates.js';
import { freePort, LogCapture } from '../support/gateway.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { readRecords } from '../support/rdkafka.js';
import { uniqueTopic } from '../support/records.js';
import { waitFor } from '../support/eventually.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const SECRET = 'rpc-tls-test-secret-16';

interface Launched {
  child: ChildProcess;
  logs: LogCapture;
  exited: Promise<number | null>;
}

function launch(args: string[]): Launched {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test' };
  delete env.QUEEN_RPC_SECRET;
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const logs = new LogCapture();
  child.stdout!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, logs, exited };
}

async function stop(launched: Launched | undefined): Promise<void> {
  if (!launched || launched.child.exitCode !== null || launched.child.signalCode !== null) return;
  launched.child.kill('SIGTERM');
  await launched.exited;
}

async function ready(launched: Launched, what: string): Promise<void> {
  await waitFor(() => launched.logs.matching('ready').length > 0 || launched.child.exitCode !== null, { timeoutMs: 45_000, what });
  expect(launched.child.exitCode, launched.logs.tail()).toBeNull();
}

/** The subject CN of the certificate a TLS server on `port` presents. */
function servedCommonName(port: number, pki: TestPki, client: { cert: string; key: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(pki.caCert), cert: readFileSync(client.cert), key: readFileSync(client.key) }, () => {
      resolve(String(socket.getPeerCertificate().subject.CN));
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

describe('the RPC over mutual TLS (core and gateway processes)', () => {
  let pki: TestPki;
  let rpcPort: number;
  let core: Launched | undefined;
  let gateway: Launched | undefined;
  let bootstrap = '';
  const live = (name: string) => join(pki.dir, name);

  const coreArgs = () => ['core', '--rpc-host', '127.0.0.1', '--rpc-port', String(rpcPort), '--log-level', 'debug', '--rpc-tls-cert-file', live('core.pem'), '--rpc-tls-key-file', live('core.key'), '--rpc-tls-ca-file', pki.caCert];
  const gatewayArgs = (cert: string, key: string, port: number) => ['gateway', '--core', `127.0.0.1:${rpcPort}`, '--host', '127.0.0.1', '--port', String(port), '--no-http', '--rpc-tls-cert-file', cert, '--rpc-tls-key-file', key, '--rpc-tls-ca-file', pki.caCert];

  beforeAll(async () => {
    pki = makeTestPki();
    // The core and the gateway read live.* files, which the reload test writes renewed certificates over.
    copyFileSync(pki.serverCert, live('core.pem'));
    copyFileSync(pki.serverKey, live('core.key'));
    const first = pki.client('gateway-1', '/O=Queen/CN=gateway-1');
    copyFileSync(first.cert, live('gateway.pem'));
    copyFileSync(first.key, live('gateway.key'));
    rpcPort = await freePort();
    core = launch(coreArgs());
    await ready(core, 'the core to listen');
    const kafkaPort = await freePort();
    gateway = launch(gatewayArgs(live('gateway.pem'), live('gateway.key'), kafkaPort));
    await ready(gateway, 'the gateway to reach the core over TLS');
    bootstrap = `127.0.0.1:${kafkaPort}`;
  }, 120_000);
  afterAll(async () => {
    await stop(gateway);
    await stop(core);
    pki?.remove();
  });

  it('serves a Kafka client through a gateway that reached the core with its certificate and no secret', async () => {
    expect(core!.logs.matching('ready', '"mutual TLS"').length).toBe(1);
    expect(core!.logs.matching('rpc connection ready', 'CN=gateway-1').length).toBeGreaterThan(0);
    const topic = uniqueTopic('rpc-tls');
    const kafka = kafkajsClient(bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })).toBe(true);
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: [{ value: 'over mutual TLS' }] });
      await producer.disconnect();
      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets[0]!.high).toBe('1');
    } finally {
      await admin.disconnect();
    }
  });

  it('takes the migration bridge with its own certificate and no secret: a topic copied offset for offset; a bridge from another CA is refused', async () => {
    const source = await startBroker({ autoCreateTopics: false, shutdownGraceMs: 1_000 });
    const topic = uniqueTopic('rpc-tls-bridge');
    const bridgeCert = pki.client('bridge', '/O=Queen/CN=bridge-1');
    const bridgeArgs = (cert: { cert: string; key: string }) => [
      'bridge', '--source', source.bootstrap, '--topics', topic, '--core', `127.0.0.1:${rpcPort}`,
      '--rpc-tls-cert-file', cert.cert, '--rpc-tls-key-file', cert.key, '--rpc-tls-ca-file', pki.caCert,
      '--progress-interval-ms', '0', '--refresh-interval-ms', '200',
    ];
    let bridge: Launched | undefined;
    try {
      const kafka = kafkajsClient(source.bootstrap);
      const admin = kafka.admin();
      await admin.connect();
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true })).toBe(true);
      await admin.disconnect();
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `copied over TLS ${i}` })) });
      await producer.disconnect();

      bridge = launch(bridgeArgs(bridgeCert));
      await waitFor(() => bridge!.logs.matching('bridge running').length > 0 || bridge!.child.exitCode !== null, { timeoutMs: 60_000, what: 'the bridge to start', describe: () => bridge!.logs.tail() });
      expect(bridge.child.exitCode, bridge.logs.tail()).toBeNull();
      expect(core!.logs.matching('rpc connection ready', 'CN=bridge-1').length).toBeGreaterThan(0);
      // The gateway on the same core serves the copy: the same records at the same offsets.
      const [original, copy] = await Promise.all([
        readRecords(source.bootstrap, topic, { partitions: [0, 1], count: 20, timeoutMs: 30_000 }),
        readRecords(bootstrap, topic, { partitions: [0, 1], count: 20, timeoutMs: 60_000 }),
      ]);
      const shape = (records: typeof copy) => records.map((r) => `${r.partition}@${r.offset} ${r.key}=${r.value}`).sort();
      expect(shape(copy)).toEqual(shape(original));
      expect(copy.filter((r) => r.value === 'copied over TLS 19')).toHaveLength(1);
    } finally {
      await stop(bridge);
      await source.stop();
    }

    const rogue = pki.client('rogue-bridge', '/CN=rogue-bridge', { untrusted: true });
    const refused = launch(bridgeArgs(rogue));
    expect(await refused.exited).toBe(1);
    expect(refused.logs.tail()).toMatch(/The bridge could not start: .*does not verify against this core's CA/);
  }, 120_000);

  it('refuses a gateway whose certificate comes from another CA: it exits saying why, the core logs it', async () => {
    const rogue = pki.client('rogue', '/CN=rogue-gateway', { untrusted: true });
    const refused = launch(gatewayArgs(rogue.cert, rogue.key, await freePort()));
    const code = await refused.exited;
    expect(code).toBe(1);
    expect(refused.logs.tail()).toMatch(/The gateway could not start: The core at 127\.0\.0\.1:\d+ refused this gateway: Authentication failed: .*its client certificate \(.*CN=rogue-gateway\) does not verify against this core's CA/);
    await waitFor(() => core!.logs.matching('rpc connection refused', 'CN=rogue-gateway', 'does not verify').length === 1, { timeoutMs: 10_000, what: 'the refusal in the core log' });
  }, 60_000);

  it('refuses a peer that presents no certificate, telling it so, and logs the attempt', async () => {
    const refusal = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = tlsConnect({ host: '127.0.0.1', port: rpcPort, ca: readFileSync(pki.caCert) });
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () => resolve(Buffer.concat(chunks)));
      socket.on('error', reject);
    });
    // One Refused frame (kind 5, reason 2: authentication), then the core closed the connection.
    expect(refusal[4]).toBe(5);
    expect(refusal[5]).toBe(2);
    expect(refusal.subarray(6).toString()).toContain('it presented no client certificate');
    await waitFor(() => core!.logs.matching('rpc connection refused', 'presented no client certificate', '127.0.0.1').length === 1, { timeoutMs: 10_000, what: 'the refusal in the core log' });
  });

  it('refuses a gateway that speaks plain TCP to a TLS core, logged', async () => {
    const before = core!.logs.matching('the TLS handshake failed').length;
    await expect(connectCore({ address: { host: '127.0.0.1', port: rpcPort }, secret: SECRET, connectTimeoutMs: 2_000 })).rejects.toThrow(/Could not reach the core/);
    await waitFor(() => core!.logs.matching('the TLS handshake failed').length > before, { timeoutMs: 10_000, what: 'the failed TLS handshake in the core log' });
  });

  it('serves renewed certificates written over the files: the core at once, a gateway on its next connection', async () => {
    const probe = pki.client('probe', '/CN=probe');
    expect(await servedCommonName(rpcPort, pki, probe)).toBe('localhost');
    const renewedCore = pki.server('core-renewed', 'renewed.localhost');
    copyFileSync(renewedCore.key, live('core.key'));
    copyFileSync(renewedCore.cert, live('core.pem'));
    await waitFor(async () => (await servedCommonName(rpcPort, pki, probe)) === 'renewed.localhost', { timeoutMs: 15_000, what: "the core's renewed certificate" });
    await waitFor(() => core!.logs.matching('TLS certificate reloaded').length > 0, { timeoutMs: 5_000, what: 'the reload in the core log' });

    // The gateway's certificate is renewed; its next connection (the core restarted) carries the new one.
    const renewedGateway = pki.client('gateway-2', '/O=Queen/CN=gateway-renewed');
    copyFileSync(renewedGateway.key, live('gateway.key'));
    copyFileSync(renewedGateway.cert, live('gateway.pem'));
    await waitFor(() => gateway!.logs.matching('TLS certificate reloaded').length > 0, { timeoutMs: 15_000, what: 'the reload in the gateway log' });
    await stop(core);
    core = launch(coreArgs());
    await ready(core, 'the restarted core');
    await waitFor(() => core!.logs.matching('rpc connection ready', 'CN=gateway-renewed').length > 0, { timeoutMs: 30_000, what: 'the gateway back with its renewed certificate' });
    const admin = kafkajsClient(bootstrap).admin();
    await admin.connect();
    try {
      const topic = uniqueTopic('rpc-tls-renewed');
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })).toBe(true);
      expect(await admin.listTopics()).toContain(topic);
    } finally {
      await admin.disconnect();
    }
  }, 90_000);
});

describe('the RPC with both mutual TLS and the secret (a core process)', () => {
  let pki: TestPki;
  let core: Launched | undefined;
  let rpcPort: number;
  let tls: TlsCredentials;

  beforeAll(async () => {
    pki = makeTestPki();
    rpcPort = await freePort();
    core = launch(['core', '--rpc-host', '127.0.0.1', '--rpc-port', String(rpcPort), '--rpc-secret', SECRET, '--rpc-tls-cert-file', pki.serverCert, '--rpc-tls-key-file', pki.serverKey, '--rpc-tls-ca-file', pki.caCert]);
    await ready(core, 'the core to listen');
    const client = pki.client('gateway', '/CN=gateway');
    tls = new TlsCredentials({ certFile: client.cert, keyFile: client.key, caFile: pki.caCert });
  }, 90_000);
  afterAll(async () => {
    await stop(core);
    pki?.remove();
  });

  it('takes a gateway that has both, and refuses one with the certificate but not the secret, another secret, or a certificate from another CA', async () => {
    const good = await connectCore({ address: { host: '127.0.0.1', port: rpcPort }, secret: SECRET, tls, connectTimeoutMs: 10_000 });
    try {
      expect(Array.isArray(await good.listQueues())).toBe(true);
    } finally {
      await good.close();
    }
    await expect(connectCore({ address: { host: '127.0.0.1', port: rpcPort }, tls, connectTimeoutMs: 10_000 })).rejects.toThrow(
      "refused this gateway: Authentication failed: this core requires the shared RPC secret; give the gateway the core's --rpc-secret (QUEEN_RPC_SECRET).",
    );
    await expect(connectCore({ address: { host: '127.0.0.1', port: rpcPort }, secret: 'another-secret-of-16', tls, connectTimeoutMs: 10_000 })).rejects.toThrow(/holds a different RPC secret/);
    // The right secret does not make up for a certificate from another CA: the refusal's sentence reaches the gateway.
    const rogue = pki.client('rogue-both', '/CN=rogue-both', { untrusted: true });
    const rogueTls = new TlsCredentials({ certFile: rogue.cert, keyFile: rogue.key, caFile: pki.caCert });
    await expect(connectCore({ address: { host: '127.0.0.1', port: rpcPort }, secret: SECRET, tls: rogueTls, connectTimeoutMs: 10_000 })).rejects.toThrow(
      /refused this gateway: Authentication failed: .*its client certificate \(.*CN=rogue-both\) does not verify against this core's CA/,
    );
  });
});
