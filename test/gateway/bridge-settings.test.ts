/**
 * `queen-gateway bridge`'s flags: what a mistake answers (one sentence saying
 * what to fix, exit code 2 from the command), and what a good set becomes;
 * the reverse direction (`--to-kafka`) likewise.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../src/cli/bridge.js';
import { CompressionCodec } from '../../protocol/records/compression.js';

const CLI = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));
const SECRET = 'a-secret-of-sixteen-chars';
const REVERSE = ['--source', 'gateway-1:9092', '--topics', 'orders', '--to-kafka', 'kafka-1:9092,kafka-2:9092'];
const GOOD = ['--source', 'k1:9092,k2:9092', '--topics', 'orders|payments', '--core', '127.0.0.1:7070', '--rpc-secret', SECRET];

function problem(args: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    readBridgeConfig(args, env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}

describe('queen-gateway bridge: flags', () => {
  it('reads a good set, repeated --source-option included', () => {
    const config = readBridgeConfig([...GOOD, '--groups', 'billing-.*', '--source-option', 'security.protocol=sasl_ssl', '--source-option', 'sasl.mechanism=PLAIN', '--compression', 'zstd', '--metrics-port', '0'], {});
    expect(config.sourceOptions).toEqual({ 'security.protocol': 'sasl_ssl', 'sasl.mechanism': 'PLAIN' });
    expect(config.compression).toBe(CompressionCodec.Zstd);
    expect(config.groups?.source).toBe('billing-.*');
    expect(config.metricsPort).toBe(0);
    expect(readBridgeConfig(['--source', 'k1:9092', '--topics', '.*', '--engine', 'postgres'], { QUEEN_DATABASE_URL: 'postgres://u:p@h:5432/d' }).databaseUrl).toBe('postgres://u:p@h:5432/d');
  });

  it('says what to fix for each mistake', () => {
    expect(problem(['--topics', 'x', '--core', '127.0.0.1:7070', '--rpc-secret', SECRET])).toMatch(/needs its source: set --source/);
    expect(problem(['--source', 'k1', '--topics', 'x', '--core', '127.0.0.1:7070', '--rpc-secret', SECRET])).toMatch(/host:port pairs/);
    expect(problem(['--source', 'k1:9092', '--core', '127.0.0.1:7070', '--rpc-secret', SECRET])).toMatch(/needs --topics/);
    expect(problem([...GOOD, '--groups', '(unclosed'])).toMatch(/--groups is not a valid regular expression/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x'])).toMatch(/exactly one target/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x', '--core', '127.0.0.1:7070'])).toMatch(/The bridge needs a way to authenticate the RPC: set --rpc-secret .* or give mutual TLS files/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x', '--core', '127.0.0.1:7070', '--rpc-secret', 'short'])).toMatch(/The RPC secret is too short/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x', '--engine', 'postgres'])).toMatch(/needs a database/);
    expect(problem([...GOOD, '--source-option', 'isolation.level=read_uncommitted'])).toMatch(/cannot be set: the bridge sets it itself/);
    expect(problem([...GOOD, '--source-option', 'novalue'])).toMatch(/KEY=VALUE/);
    expect(problem([...GOOD, '--compression', 'brotli'])).toMatch(/--compression must be one of none, gzip, snappy, lz4, zstd/);
    expect(problem([...GOOD, '--metrics-port', '70000'])).toMatch(/--metrics-port must be a whole number from 0 to 65535/);
    expect(problem([...GOOD, '--port', '9092'])).toMatch(/Unknown flag --port for the bridge/);
    expect(problem([...GOOD, '--topics', 'again'])).toMatch(/given twice/);
  });

  it('stops the command with the sentence and exit code 2', () => {
    const run = spawnSync(process.execPath, [CLI, 'bridge', '--topics', 'x'], { encoding: 'utf8', env: { ...process.env, QUEEN_RPC_SECRET: '' } });
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toMatch(/^The bridge needs its source: set --source/);
    const help = spawnSync(process.execPath, [CLI, 'bridge', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--source-option KEY=VALUE');
  }, 60_000);
});

describe('queen-gateway bridge --to-kafka: flags', () => {
  it('reads the reverse direction, repeated --target-option included, with no core and no RPC secret', () => {
    const config = readBridgeConfig([...REVERSE, '--groups', '.*', '--target-option', 'security.protocol=ssl', '--target-option', 'ssl.ca.location=/etc/ca.pem'], {});
    expect(config.toKafka).toBe('kafka-1:9092,kafka-2:9092');
    expect(config.targetOptions).toEqual({ 'security.protocol': 'ssl', 'ssl.ca.location': '/etc/ca.pem' });
    expect(config.core).toBeNull();
    expect(config.engine).toBeNull();
    expect(readBridgeConfig(['--source', 'k1:9092', '--topics', 'x', '--core', '127.0.0.1:7070', '--rpc-secret', 'a-secret-of-sixteen-chars'], {}).toKafka).toBeNull();
  });

  it('refuses what does not go with it', () => {
    expect(problem([...REVERSE, '--core', '127.0.0.1:7070'], { QUEEN_RPC_SECRET: 'a-secret-of-sixteen-chars' })).toMatch(/exactly one target: .* or --to-kafka BROKERS/);
    expect(problem([...REVERSE, '--engine', 'postgres'], { QUEEN_DATABASE_URL: 'postgres://u:p@h:5432/d' })).toMatch(/exactly one target/);
    expect(problem([...REVERSE, '--database-url', 'postgres://u:p@h:5432/d'])).toMatch(/--database-url is for a core target; with --to-kafka the target is Kafka: leave --database-url out/);
    expect(problem([...REVERSE, '--rpc-secret', 'a-secret-of-sixteen-chars'])).toMatch(/--rpc-secret is for a core target/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x', '--to-kafka', 'kafka-1'])).toMatch(/--to-kafka must be host:port pairs/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x', '--to-kafka', 'k2:9092,k1:9092'])).toMatch(/--to-kafka names a broker of --source/);
    expect(problem([...REVERSE, '--target-option', 'transactional.id=mine'])).toMatch(/--target-option transactional.id cannot be set: the bridge sets it itself/);
    expect(problem([...REVERSE, '--target-option', 'bootstrap.servers=k9:9092'])).toMatch(/use --to-kafka/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x', '--core', '127.0.0.1:7070', '--rpc-secret', 'a-secret-of-sixteen-chars', '--target-option', 'linger.ms=10'])).toMatch(/--target-option is for the reverse direction only/);
  });

  it('lists the reverse direction in help', () => {
    const help = spawnSync(process.execPath, [CLI, 'bridge', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--to-kafka BROKERS');
    expect(help.stdout).toContain('--target-option KEY=VALUE');
  }, 60_000);
});

describe('queen-gateway bridge --core with mutual TLS: flags', () => {
  const TLS = ['--rpc-tls-cert-file', '/etc/queen/bridge.pem', '--rpc-tls-key-file', '/etc/queen/bridge.key', '--rpc-tls-ca-file', '/etc/queen/ca.pem'];
  const CORE = ['--source', 'k1:9092', '--topics', 'x', '--core', 'core.internal:7070'];

  it('takes the three files with no secret, or with one', () => {
    const config = readBridgeConfig([...CORE, ...TLS], {});
    expect(config.rpcTls).toEqual({ certFile: '/etc/queen/bridge.pem', keyFile: '/etc/queen/bridge.key', caFile: '/etc/queen/ca.pem' });
    expect(config.rpcSecret).toBeNull();
    expect(readBridgeConfig([...CORE, ...TLS], { QUEEN_RPC_SECRET: SECRET }).rpcSecret).toBe(SECRET);
    expect(readBridgeConfig(GOOD, {}).rpcTls).toBeNull();
  });

  it('refuses some of the files, or the files without --core', () => {
    expect(problem([...CORE, ...TLS.slice(0, 4)])).toMatch(/--rpc-tls-cert-file, --rpc-tls-key-file and --rpc-tls-ca-file go together/);
    expect(problem(['--source', 'k1:9092', '--topics', 'x', '--engine', 'postgres', ...TLS], { QUEEN_DATABASE_URL: 'postgres://u:p@h:5432/d' })).toMatch(/The --rpc-tls-\* files are for --core/);
    expect(problem([...REVERSE, ...TLS])).toMatch(/The --rpc-tls-\* files are for --core/);
  });

  it('lists the files in help', () => {
    const help = spawnSync(process.execPath, [CLI, 'bridge', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--rpc-tls-cert-file FILE');
  }, 60_000);
});
