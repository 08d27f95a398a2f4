/**
 * `queen-gateway bridge --to-kafka`'s flags: the reverse direction as a good
 * set becomes, and each combination that does not go with it refused with a
 * sentence saying what to fix.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../src/cli/bridge.js';

const CLI = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));
const REVERSE = ['--source', 'gateway-1:9092', '--topics', 'orders', '--to-kafka', 'kafka-1:9092,kafka-2:9092'];

function problem(args: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    readBridgeConfig(args, env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}

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
