import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));

/** Runs the CLI to its exit; tests here only use arguments that stop it at validation. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the CLI did not exit; stdout: ${stdout}`));
    }, 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe('queen-gateway serve: settings are validated before starting', () => {
  it.each([
    [['serve', '--port', 'ninety'], {}, 'The flag --port must be a whole number from 0 to 65535; got "ninety".'],
    [['serve', '--port=70000'], {}, 'The flag --port must be a whole number from 0 to 65535; got "70000".'],
    [['serve', '--engine', 'sqlite'], {}, 'The flag --engine must be one of memory, postgres; got "sqlite".'],
    [['serve', '--colour', 'blue'], {}, 'Unknown flag --colour; run "queen-gateway serve --help" to see the flags.'],
    [['serve', '--default-partitions'], {}, 'The flag --default-partitions needs a value, e.g. --default-partitions <value>.'],
    [['serve'], { QUEEN_MAX_CONNECTIONS: 'lots' }, 'The environment variable QUEEN_MAX_CONNECTIONS must be a whole number from 1 to 1000000; got "lots".'],
    [['serve'], { QUEEN_AUTO_CREATE_TOPICS: 'maybe' }, 'The environment variable QUEEN_AUTO_CREATE_TOPICS must be true or false; got "maybe".'],
    [['serve', '--max-frame-bytes', '2000000', '--max-buffered-bytes', '1000000'], {}, '--max-frame-bytes (2000000) is above --max-buffered-bytes (1000000), so a frame of the largest size could never be read; raise --max-buffered-bytes or lower --max-frame-bytes.'],
    [['serve', '--database-statement-timeout-ms', '5'], {}, 'The flag --database-statement-timeout-ms must be a whole number from 100 to 2147483647; got "5".'],
    [['serve', '--max-inflated-batch-bytes', '10'], {}, 'The flag --max-inflated-batch-bytes must be a whole number from 1024 to 2147483647; got "10".'],
    [['serve'], { QUEEN_MAX_INFLATED_REQUEST_BYTES: '64MB' }, 'The environment variable QUEEN_MAX_INFLATED_REQUEST_BYTES must be a whole number from 1024 to 2147483647; got "64MB".'],
    [['serve', '--engine', 'postgres'], {}, '--engine postgres needs a database: set --database-url (or QUEEN_DATABASE_URL) to a URL such as postgres://user:pass@localhost:5432/queen.'],
    [['gateway', '--core', '127.0.0.1:7070', '--rpc-secret', 'sixteen-characters!', '--redis-url', 'http://127.0.0.1:6379'], {}, 'The flag --redis-url is wrong: The Redis URL must start with redis:// or rediss://; got "http:". Give one like redis://127.0.0.1:6379.'],
  ])('%j %j stops with one sentence and exit code 2', async (args, env, sentence) => {
    const { code, stderr } = await run(args, env);
    expect(stderr.trim()).toBe(sentence);
    expect(code).toBe(2);
  });

  it.each(['0.0.0.0', '::'])('refuses the wildcard listen address %s without an advertised host', async (host) => {
    const { code, stderr } = await run(['serve', '--host', host], { QUEEN_ADVERTISED_HOST: '' });
    expect(stderr.trim()).toBe(
      `Listening on ${host} (every interface) needs an advertised address: set --advertised-host (or QUEEN_ADVERTISED_HOST) to the host name or IP clients should connect to.`,
    );
    expect(code).toBe(2);
  });

  it('stops with a sentence naming a Redis that does not answer', async () => {
    // Port 1 on loopback: nothing listens there.
    const { code, stderr } = await run(['serve', '--port', '0', '--no-http', '--redis-url', 'redis://127.0.0.1:1']);
    expect(stderr.trim()).toMatch(/^The gateway could not start: Redis at redis:\/\/127\.0\.0\.1:1 could not be reached \(.+\); start Redis there or correct --redis-url\.$/);
    expect(code).toBe(1);
  });

  it('lets a flag override the environment', async () => {
    const { code, stderr } = await run(['serve', '--port', 'bad'], { QUEEN_PORT: '9093' });
    expect(stderr).toMatch(/--port/);
    expect(code).toBe(2);
  });

  it('lists every flag with its environment variable in --help', async () => {
    const { code, stdout } = await run(['serve', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--advertised-host\s+QUEEN_ADVERTISED_HOST/);
    expect(stdout).toMatch(/--max-frame-bytes\s+QUEEN_MAX_FRAME_BYTES/);
  });
});

describe('queen-gateway: version and help', () => {
  it('prints the package version for --version, -v and version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v', 'version']) {
      const { code, stdout } = await run([flag]);
      expect(code).toBe(0);
      expect(stdout).toBe(`queen-gateway ${version}\n`);
    }
  });

  it('lists every command in the top-level help, and a command\'s flags under help <command>', async () => {
    const top = await run(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: queen-gateway \[command\] \[flags\]/);
    for (const command of ['serve', 'core', 'gateway']) expect(top.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
    expect(top.stdout).not.toMatch(/--max-frame-bytes/);
    const gateway = await run(['help', 'gateway']);
    expect(gateway.stdout).toMatch(/^Usage: queen-gateway gateway \[flags\]/);
    expect(gateway.stdout).toMatch(/--core\s+QUEEN_CORE/);
  });
});

describe('queen-gateway serve: running', () => {
  it('starts on the memory engine, says the data is lost on exit, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--http-port', '0', '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.includes('"ready')) resolve();
      }),
    );
    await ready;
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
    // The first line says where the data goes, as the README promises.
    expect(lines[0]!.msg).toMatch(/^Using the memory engine: every topic and record is lost when this process exits.*--engine postgres --database-url/);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
