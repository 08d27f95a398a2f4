/**
 * The configuration file (YAML or TOML, --config or QUEEN_CONFIG): every
 * setting a flag holds, for every command, the bridge's included; precedence
 * flags > environment > file > defaults; unknown names in the file and in the
 * environment refused with the closest valid one; values checked as flags
 * are, naming the file; and `config print`, run as the real binary, showing
 * the effective configuration with each value's source and secrets masked.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readBridgeConfig } from '../../src/cli/bridge.js';
import { helpText, readConfig, type Command } from '../../src/cli/settings.js';

const BIN = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));
const SECRET = 'a-secret-of-sixteen-chars';
const dir = mkdtempSync(join(tmpdir(), 'queen-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function file(extension: string, text: string): string {
  const path = join(dir, `settings-${++files}.${extension}`);
  writeFileSync(path, text);
  return path;
}

function refusal(args: string[], env: NodeJS.ProcessEnv = {}, command: Command = 'serve'): string {
  try {
    if (command === 'bridge') readBridgeConfig(args, env);
    else readConfig(args, env, command);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}

/** Runs the CLI to its exit. */
function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a configuration file', () => {
  it('holds every kind of setting in YAML: numbers, switches, choices, lists', () => {
    const yaml = file('yaml', ['http-port: 7001', 'port: 19092', 'auto-create-topics: false', 'log-level: warn', 'listener:', '  - PLAINTEXT://127.0.0.1:19092', '  - SASL_PLAINTEXT://127.0.0.1:19093', 'sasl-mechanisms: PLAIN'].join('\n'));
    expect(readConfig(['--config', yaml], {})).toMatchObject({ httpPort: 7001, port: 19092, autoCreateTopics: false, logLevel: 'warn', listener: ['PLAINTEXT://127.0.0.1:19092', 'SASL_PLAINTEXT://127.0.0.1:19093'] });
  });

  it('holds the same in TOML, named by QUEEN_CONFIG', () => {
    const toml = file('toml', ['http-port = 7002', 'auto-create-topics = false', 'listener = ["PLAINTEXT://127.0.0.1:19094"]', 'cluster-id = "orders-cluster"'].join('\n'));
    expect(readConfig([], { QUEEN_CONFIG: toml })).toMatchObject({ httpPort: 7002, autoCreateTopics: false, listener: ['PLAINTEXT://127.0.0.1:19094'], clusterId: 'orders-cluster' });
  });

  it('loses to the environment, which loses to flags; defaults fill the rest', () => {
    const yaml = file('yaml', 'http-port: 7001\nport: 19092\ndefault-partitions: 3\n');
    const config = readConfig(['--config', yaml, '--http-port', '7100'], { QUEEN_HTTP_PORT: '7050', QUEEN_PORT: '19093' });
    expect(config).toMatchObject({ httpPort: 7100, port: 19093, defaultPartitions: 3, maxInFlight: 100 });
  });

  it('serves the split layout: a core and a gateway each take their own keys from one file', () => {
    const shared = file('yaml', `rpc-secret: ${SECRET}\ncore: core.internal:7070\nrpc-port: 7171\nengine: memory\nport: 19095\n`);
    expect(readConfig(['--config', shared], {}, 'core')).toMatchObject({ rpcPort: 7171, rpcSecret: SECRET });
    expect(readConfig(['--config', shared], {}, 'gateway')).toMatchObject({ core: 'core.internal:7070', port: 19095 });
  });

  it('configures the bridge, librdkafka options as a mapping, with the bridge\'s own checks', () => {
    const yaml = file('yaml', ['source: k1:9092,k2:9092', "topics: 'orders|payments'", 'core: 127.0.0.1:7070', `rpc-secret: ${SECRET}`, 'compression: zstd', 'source-option:', '  security.protocol: sasl_ssl', '  ssl.cipher.suites: "A,B"'].join('\n'));
    const config = readBridgeConfig(['--config', yaml, '--groups', 'billing-.*'], {});
    expect(config).toMatchObject({ source: 'k1:9092,k2:9092', core: '127.0.0.1:7070', rpcSecret: SECRET, sourceOptions: { 'security.protocol': 'sasl_ssl', 'ssl.cipher.suites': 'A,B' } });
    expect(config.topics.source).toBe('orders|payments');
    const reserved = file('yaml', ['source: k1:9092', 'topics: x', 'core: 127.0.0.1:7070', `rpc-secret: ${SECRET}`, 'source-option:', '  isolation.level: read_uncommitted'].join('\n'));
    expect(refusal(['--config', reserved], {}, 'bridge')).toMatch(/--source-option isolation.level cannot be set: the bridge sets it itself/);
  });

  it('refuses an unknown key with the closest valid name, and one no name is near', () => {
    const typo = file('yaml', 'htp-port: 6632\n');
    expect(refusal(['--config', typo])).toBe(`Unknown setting "htp-port" in ${typo}; did you mean "http-port"?`);
    const far = file('yaml', 'favourite-colour: blue\n');
    expect(refusal(['--config', far])).toBe(`Unknown setting "favourite-colour" in ${far}: a configuration file's keys are the flag names without "--" (run "queen-gateway serve --help" to see them).`);
  });

  it('checks values as flags are, naming the file', () => {
    const bad = file('yaml', 'http-port: 70000\n');
    expect(refusal(['--config', bad])).toBe(`The setting "http-port" in ${bad} must be a whole number from 0 to 65535; got "70000".`);
    const word = file('toml', 'max-connections = "lots"\n');
    expect(refusal(['--config', word])).toBe(`The setting "max-connections" in ${word} must be a whole number from 1 to 1000000; got "lots".`);
    const choice = file('yaml', 'engine: sqlite\n');
    expect(refusal(['--config', choice])).toBe(`The setting "engine" in ${choice} must be one of memory, postgres; got "sqlite".`);
    const list = file('yaml', 'port: [1, 2]\n');
    expect(refusal(['--config', list])).toBe(`The setting "port" in ${list} must be a single value; got a list.`);
    const combination = file('yaml', 'engine: postgres\n');
    expect(refusal(['--config', combination])).toMatch(/^--engine postgres needs a database: set --database-url/);
  });

  it('says what is wrong with the file itself', () => {
    expect(refusal(['--config', join(dir, 'missing.yaml')])).toMatch(/^The configuration file .*missing\.yaml could not be read \(ENOENT\); check the path given to --config \(or QUEEN_CONFIG\)\.$/);
    const json = file('json', '{}');
    expect(refusal(['--config', json])).toBe(`The configuration file ${json} must end in .yaml, .yml or .toml: its extension says how it is read.`);
    const broken = file('yaml', 'port: [1, 2\n');
    expect(refusal(['--config', broken])).toMatch(new RegExp(`^The configuration file ${broken.replace(/[.]/g, '\\.')} is not valid YAML: .+; correct it and start again\\.$`));
    const duplicate = file('yaml', 'port: 1\nport: 2\n');
    expect(refusal(['--config', duplicate])).toMatch(/is not valid YAML: .*unique/i);
    const scalar = file('yaml', 'just text\n');
    expect(refusal(['--config', scalar])).toBe(`The configuration file ${scalar} must be a mapping of setting names to values, e.g. "http-port: 6632".`);
  });
});

describe('QUEEN_* environment variables', () => {
  it('refuses a name that is no setting, with the closest valid one', () => {
    expect(refusal([], { QUEEN_HTP_PORT: '6632' })).toBe('Unknown setting QUEEN_HTP_PORT in the environment; did you mean QUEEN_HTTP_PORT?');
    expect(refusal([], { QUEEN_FAVOURITE_COLOUR: 'blue' })).toBe(
      'Unknown setting QUEEN_FAVOURITE_COLOUR in the environment: every QUEEN_* variable must name a setting; correct it or unset it (run "queen-gateway serve --help" to see them).',
    );
    expect(refusal(['--source', 'k1:9092', '--topics', 'x', '--core', '127.0.0.1:7070'], { QUEEN_RPC_SECRT: SECRET }, 'bridge')).toBe('Unknown setting QUEEN_RPC_SECRT in the environment; did you mean QUEEN_RPC_SECRET?');
  });

  it('suggests the flag for a misspelt flag', () => {
    expect(refusal(['--http-prot', '1'])).toBe('Unknown flag --http-prot; did you mean --http-port? Run "queen-gateway serve --help" to see the flags.');
  });

  it('states the precedence and the file in --help', () => {
    for (const command of ['serve', 'core', 'gateway', 'bridge'] as const) {
      const help = helpText(command);
      expect(help).toContain('Precedence: flags > environment variables (QUEEN_*) > configuration file > defaults.');
      expect(help).toMatch(/--config FILE\s+QUEEN_CONFIG\s+a YAML/);
    }
  });
});

describe('queen-gateway config print', () => {
  it('prints the effective configuration as YAML, each value with its source, secrets masked', async () => {
    const yaml = file('yaml', ['http-port: 7001', 'engine: postgres', 'database-url: postgres://queen:db-password@db.internal:5432/queen', 'redis-url: redis://:redis-password@redis.internal:6379'].join('\n'));
    const { code, stdout, stderr } = await run(['config', 'print', '--config', yaml, '--port', '19092'], { QUEEN_DEFAULT_PARTITIONS: '4' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^# Precedence: flags > environment \(QUEEN_\*\) > configuration file \(.*settings-\d+\.yaml\) > defaults;$/m);
    expect(stdout).toMatch(/^port: 19092 # flag$/m);
    expect(stdout).toMatch(/^default-partitions: 4 # environment QUEEN_DEFAULT_PARTITIONS$/m);
    expect(stdout).toMatch(new RegExp(`^http-port: 7001 # file ${yaml.replace(/[.]/g, '\\.')}$`, 'm'));
    expect(stdout).toMatch(/^max-in-flight: 100 # default$/m);
    expect(stdout).not.toContain('db-password');
    expect(stdout).not.toContain('redis-password');
    const printed = parse(stdout) as Record<string, unknown>;
    expect(printed['database-url']).toBe('postgres://queen:********@db.internal:5432/queen');
    expect(printed['redis-url']).toBe('redis://:********@redis.internal:6379');
  }, 60_000);

  it('masks the password of a database URL naming several servers (a replicated store, docs/failover.md)', async () => {
    const url = 'postgres://queen:db-password@db1.internal:5432,db2.internal:5432,db3.internal:5432/queen?target_session_attrs=read-write';
    const { code, stdout } = await run(['config', 'print', '--engine', 'postgres', '--database-url', url]);
    expect(code).toBe(0);
    expect(stdout).not.toContain('db-password');
    expect((parse(stdout) as Record<string, unknown>)['database-url']).toBe('postgres://queen:********@db1.internal:5432,db2.internal:5432,db3.internal:5432/queen?target_session_attrs=read-write');
  }, 60_000);

  it('masks the RPC secret and librdkafka passwords of another command, and reads back as a configuration file', async () => {
    const { code, stdout } = await run(['config', 'print', 'bridge', '--source', 'k1:9092', '--topics', '.*', '--core', '127.0.0.1:7070', '--source-option', 'sasl.password=kafka-password', '--source-option', 'security.protocol=sasl_ssl'], { QUEEN_RPC_SECRET: SECRET });
    expect(code).toBe(0);
    expect(stdout).not.toContain(SECRET);
    expect(stdout).not.toContain('kafka-password');
    expect(parse(stdout)).toMatchObject({ 'rpc-secret': '********', 'source-option': { 'sasl.password': '********', 'security.protocol': 'sasl_ssl' } });
    expect(stdout).toMatch(/^rpc-secret: "\*+" # environment QUEEN_RPC_SECRET$/m);

    const printed = await run(['config', 'print', 'core', '--rpc-port', '7171'], { QUEEN_RPC_SECRET: SECRET });
    const saved = file('yaml', printed.stdout.replace(/^rpc-secret: .*$/m, `rpc-secret: ${SECRET}`));
    const again = await run(['config', 'print', 'core', '--config', saved]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^rpc-port: 7171 # file /m);
    expect(parse(again.stdout)).toEqual(parse(printed.stdout));
  }, 60_000);

  it('stops with the sentence and exit code 2 when the configuration is wrong', async () => {
    const typo = file('yaml', 'htp-port: 6632\n');
    const { code, stdout, stderr } = await run(['config', 'print', '--config', typo]);
    expect(stdout).toBe('');
    expect(stderr.trim()).toBe(`Unknown setting "htp-port" in ${typo}; did you mean "http-port"?`);
    expect(code).toBe(2);
  }, 60_000);
});
