/**
 * `queen-gateway bridge`: the migration bridge (src/bridge) as a command.
 * Its settings are a table of their own (./bridge-settings.ts), read by the
 * same parser as serve's from flags, QUEEN_* variables and a configuration
 * file, and checked before anything starts; a mistake is one sentence on
 * stderr and exit code 2. The target is a core: over the internal
 * RPC (--core HOST:PORT, authenticated as a gateway is: the secret in
 * --rpc-secret or QUEEN_RPC_SECRET, mutual TLS with the --rpc-tls-* files, or
 * both), or a PostgreSQL engine opened in this process (--engine postgres
 * --database-url).
 * Over the RPC the core's group coordinator is the gateways' own, so a group
 * whose members have joined on the target is seen to have moved at once.
 * With --to-kafka the target is an Apache Kafka cluster instead (the reverse
 * direction, src/bridge/to-kafka.ts) and no core is opened.
 */
import { openCore, type Core } from '../core/index.js';
import { connectCore, parseRpcAddress } from '../rpc/index.js';
import { Bridge } from '../bridge/bridge.js';
import { KafkaTarget } from '../bridge/to-kafka.js';
import { finalReport, progressLine, rate, serveMetrics } from '../bridge/report.js';
import { TlsCredentials } from '../tls/credentials.js';
import type { BridgeConfig } from './bridge-settings.js';
import { processLogger } from './lifecycle.js';
import type { Logger } from 'pino';

export type { BridgeConfig } from './bridge-settings.js';
export { readBridgeSettings as readBridgeConfig } from './settings.js';

/** Runs the bridge until SIGINT or SIGTERM; then the final report on stderr, exit 0. */
export async function runBridge(config: BridgeConfig): Promise<void> {
  const log = processLogger(config.logLevel, 'queen-bridge');
  const core = await targetCore(config, log);
  let bridge: Bridge;
  try {
    const target = core ?? (await KafkaTarget.start({ bootstrap: config.toKafka!, options: config.targetOptions, compression: config.compression, log }));
    bridge = await Bridge.start({
      source: config.source,
      sourceOptions: config.sourceOptions,
      topics: config.topics,
      groups: config.groups,
      ...(target instanceof KafkaTarget ? { target } : { core: target }),
      refreshIntervalMs: config.refreshIntervalMs,
      log,
    });
  } catch (e) {
    await core?.close();
    throw e;
  }
  let stopping = false;
  const metrics = config.metricsPort === null ? null : await serveMetrics(config.metricsPort, () => bridge.progress(), () => !stopping);
  log.info({ source: config.source, metrics: metrics ? `http://127.0.0.1:${metrics.port}/metrics` : null }, `bridge running: copying from ${config.source}${config.toKafka ? ` to Kafka at ${config.toKafka}` : ''}`);
  let last: { copied: number; at: number } | null = null;
  const progress = config.progressIntervalMs === 0 ? null : setInterval(() => {
    const now = Date.now();
    const p = bridge.progress();
    process.stderr.write(progressLine(p, rate(p, now, last)) + '\n');
    last = { copied: p.copied, at: now };
  }, config.progressIntervalMs);

  const stop = async (reason: string, failure: Error | null) => {
    if (stopping) return;
    stopping = true;
    if (progress) clearInterval(progress);
    log.info({ reason }, 'stopping: writing what was read, then the final report');
    const p = await bridge.stop();
    await metrics?.close();
    await core?.close();
    process.stderr.write(finalReport(p, Date.now()) + '\n');
    log.info({ copied: p.copied, topics: p.topics, groups: p.groups }, 'bridge stopped');
    if (failure) {
      process.stderr.write(failure.message + '\n');
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT', null));
  process.on('SIGTERM', () => void stop('SIGTERM', null));
  bridge.done.catch((e: Error) => void stop('failure', e));
}

/** The core the bridge copies into: over the RPC, or a PostgreSQL engine in this process; none with --to-kafka. */
async function targetCore(config: BridgeConfig, log: Logger): Promise<Core | null> {
  if (config.toKafka !== null) return null;
  if (config.core === null) return openCore({ engine: 'postgres', url: config.databaseUrl!, schema: config.databaseSchema, log });
  return connectCore({
    address: parseRpcAddress(config.core),
    ...(config.rpcSecret === null ? {} : { secret: config.rpcSecret }),
    ...(config.rpcTls === null ? {} : { tls: new TlsCredentials({ ...config.rpcTls, clientAuth: 'required' }, log) }),
    connectTimeoutMs: 30_000,
    log,
  });
}
