/**
 * The `queen-gateway` command. `serve` (the default) runs the gateway and the
 * core in one process, configured by flags and QUEEN_* environment variables
 * (./settings.ts), validated before anything starts. Logs are pino JSON on
 * stdout; a configuration mistake is one sentence on stderr and exit code 2.
 */
import { pino } from 'pino';
import { startBroker } from '../index.js';
import { ConfigError, helpText, readConfig, type ServeConfig } from './settings.js';

const USAGE_ERROR = 2;

async function serve(config: ServeConfig): Promise<void> {
  const log = pino({ level: config.logLevel, base: { service: 'queen-gateway' } });
  const broker = await startBroker({
    engine: config.engine as 'memory' | 'postgres',
    url: config.databaseUrl,
    schema: config.databaseSchema,
    host: config.host,
    port: config.port,
    advertisedHost: config.advertisedHost,
    advertisedPort: config.advertisedPort,
    autoCreateTopics: config.autoCreateTopics,
    defaultPartitions: config.defaultPartitions,
    logger: log,
    limits: {
      maxFrameBytes: config.maxFrameBytes,
      maxConnections: config.maxConnections,
      idleTimeoutMs: config.idleTimeoutMs,
      maxInFlightPerConnection: config.maxInFlight,
    },
    fetchMaxBytes: config.fetchMaxBytes,
    maxFetchSessions: config.maxFetchSessions,
    nodeId: config.nodeId,
    clusterId: config.clusterId,
    shutdownGraceMs: config.shutdownGraceMs,
    groups: {
      initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
      minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
      maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
      maxGroupSize: config.groupMaxSize,
    },
  });
  if (config.engine === 'memory') {
    log.warn(
      'Using the memory engine: every topic and record is lost when this process exits. For durable storage run with --engine postgres --database-url postgres://user:pass@host:5432/db (or QUEEN_ENGINE=postgres and QUEEN_DATABASE_URL).',
    );
  }
  log.info({ bootstrap: broker.bootstrap }, `ready: point bootstrap.servers at ${broker.bootstrap}`);

  let signalled = false;
  const shutDown = (signal: string) => {
    if (signalled) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalled = true;
    log.info({ signal }, 'shutting down');
    broker.stop().then(
      () => process.exit(0),
      (e) => {
        log.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutDown('SIGINT'));
  process.on('SIGTERM', () => shutDown('SIGTERM'));
}

export async function main(argv: readonly string[]): Promise<void> {
  const [first, ...rest] = argv;
  const command = first === undefined || first.startsWith('--') ? 'serve' : first;
  const args = first === undefined || first.startsWith('--') ? argv : rest;
  if (args.includes('--help') || args.includes('-h') || command === 'help') {
    process.stdout.write(helpText() + '\n');
    return;
  }
  if (command !== 'serve') {
    process.stderr.write(`Unknown command "${command}"; the command is "serve" (run "queen-gateway --help" for its flags).\n`);
    process.exitCode = USAGE_ERROR;
    return;
  }
  let config: ServeConfig;
  try {
    config = readConfig(args, process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(e.message + '\n');
      process.exitCode = USAGE_ERROR;
      return;
    }
    throw e;
  }
  try {
    await serve(config);
  } catch (e) {
    // A start failure the settings could not catch (port in use, database down): one line, then exit.
    const reason = (e as NodeJS.ErrnoException).code === 'EADDRINUSE'
      ? `Port ${config.port} on ${config.host} is already in use; stop whatever holds it or choose another with --port.`
      : `The gateway could not start: ${(e as Error).message}`;
    process.stderr.write(reason + '\n');
    process.exit(1);
  }
}

await main(process.argv.slice(2));
