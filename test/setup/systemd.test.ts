/**
 * The systemd units in deploy/: `systemd-analyze verify` finds nothing to say
 * about them, they run a command the CLI has with an environment file whose
 * settings the CLI accepts, and under Type=notify the process says READY=1
 * only once its listener accepts connections (a stand-in notification
 * socket, test/support/notify-socket.py, checks the port at the moment each
 * message arrives), and STOPPING=1 when it is told to stop.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS, readConfig, type Command } from '../../src/cli/settings.js';
import { waitFor } from '../support/eventually.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'queen-systemd-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const UNITS = [
  { file: 'queen-gateway.service', command: 'serve', environment: 'queen-gateway.env' },
  { file: 'queen-core.service', command: 'core', environment: 'queen-core.env' },
] as const;

/** The [Service] section's settings, a key to every value it is given. */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) section = line;
    else if (section === '[Service]') {
      const [key, value] = line.split(/=(.*)/s, 2) as [string, string];
      settings.set(key, [...(settings.get(key) ?? []), value]);
    }
  }
  return settings;
}

function environmentFile(name: string): Record<string, string> {
  const lines = readFileSync(join(ROOT, 'deploy', name), 'utf8').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  return Object.fromEntries(lines.map((l) => l.split(/=(.*)/s, 2) as [string, string]));
}

async function verify(path: string): Promise<{ code: number; output: string }> {
  return run('systemd-analyze', ['verify', path]).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, output: e.stdout + e.stderr }),
  );
}

describe.each(UNITS)('deploy/$file', ({ file, command, environment }) => {
  const path = join(ROOT, 'deploy', file);
  const text = readFileSync(path, 'utf8');
  const settings = serviceSettings(text);

  it('passes systemd-analyze verify without a word (a misspelt key would be named)', async () => {
    expect(await verify(path)).toEqual({ code: 0, output: '' });
    const misspelt = join(work, file);
    writeFileSync(misspelt, text.replace('ProtectSystem=', 'ProtectSystm=').replace('Type=notify', 'Type=notfy'));
    const broken = await verify(misspelt);
    expect(broken.output).toMatch(/Unknown key 'ProtectSystm'/);
    expect(broken.output).toMatch(/service type.*notfy/);
  });

  it('is a hardened notify service that restarts on failure and reads its settings from an environment file', () => {
    expect(settings.get('Type')).toEqual(['notify']);
    expect(settings.get('NotifyAccess')).toEqual(['all']);
    expect(settings.get('Restart')).toEqual(['on-failure']);
    for (const [key, value] of [['NoNewPrivileges', 'yes'], ['ProtectSystem', 'strict'], ['ProtectHome', 'yes'], ['PrivateTmp', 'yes'], ['DynamicUser', 'yes'], ['CapabilityBoundingSet', '']]) {
      expect(settings.get(key!), `${key}=${value}`).toEqual([value]);
    }
    expect(settings.get('EnvironmentFile')).toEqual([`/etc/queen-gateway/${environment}`]);
  });

  it(`runs "${command}" with settings the CLI accepts (deploy/${environment})`, () => {
    const [exec] = settings.get('ExecStart')!;
    const words = exec!.split(/\s+/);
    const at = words.findIndex((w) => w.endsWith('bin/queen-gateway.js'));
    expect(at).toBeGreaterThan(0);
    expect(words[at + 1]).toBe(command);
    expect(Object.keys(COMMANDS)).toContain(command);
    expect(() => readConfig(words.slice(at + 2), environmentFile(environment), command as Command)).not.toThrow();
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Notification {
  message: string;
  portAccepts: boolean;
}

/** The stand-in notification socket: what it received, with whether the port accepted at that moment. */
async function notificationSocket(port: number): Promise<{ path: string; received: Notification[]; process: ChildProcess }> {
  const path = join(work, `notify-${port}.sock`);
  const child = spawn('python3', [join(ROOT, 'test/support/notify-socket.py'), path, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const received: Notification[] = [];
  let listening = false;
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      const parsed = JSON.parse(line) as Notification | { listening: string };
      if ('listening' in parsed) listening = true;
      else received.push(parsed);
    }
  });
  await waitFor(() => listening, { what: 'the stand-in notification socket to be bound', timeoutMs: 15_000 });
  return { path, received, process: child };
}

describe('readiness under Type=notify', () => {
  const cases: { command: Command; args: (port: number) => string[] }[] = [
    { command: 'serve', args: (port) => ['--port', String(port), '--no-http'] },
    { command: 'core', args: (port) => ['--rpc-port', String(port), '--rpc-secret', 'a-secret-of-at-least-sixteen-characters'] },
  ];

  it.each(cases)('$command says READY=1 once its port accepts, and STOPPING=1 on SIGTERM', async ({ command, args }) => {
    const port = await freePort();
    const socket = await notificationSocket(port);
    const child = spawn(process.execPath, [join(ROOT, 'bin/queen-gateway.js'), command, ...args(port), '--log-level', 'warn'], {
      cwd: ROOT,
      env: { ...process.env, NOTIFY_SOCKET: socket.path },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d));
    child.stderr!.on('data', (d: Buffer) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const ready = () => socket.received.find((n) => n.message.split('\n').includes('READY=1'));
      await waitFor(() => ready() !== undefined, { what: `READY=1 from "${command}"`, timeoutMs: 60_000, describe: () => `received ${JSON.stringify(socket.received)}; output: ${output}` });
      expect(ready()!.portAccepts, `port ${port} accepted when READY=1 arrived`).toBe(true);
      expect(ready()!.message).toMatch(/^STATUS=serving /m);
      // Nothing said READY before the port accepted.
      expect(socket.received.filter((n) => n.message.includes('READY=1') && !n.portAccepts)).toEqual([]);

      child.kill('SIGTERM');
      await waitFor(() => socket.received.some((n) => n.message.split('\n').includes('STOPPING=1')), { what: `STOPPING=1 from "${command}" after SIGTERM`, timeoutMs: 30_000 });
      expect(await exited).toBe(0);
      expect(output).not.toMatch(/systemd-notify failed/);
    } finally {
      child.kill('SIGKILL');
      socket.process.kill('SIGKILL');
    }
  }, 120_000);
});
