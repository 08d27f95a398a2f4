/**
 * The split layout's commands at the command line: `core` and `gateway` take
 * their own settings, refuse the other's with a sentence that says where the
 * flag belongs, and need the shared secret (and the gateway its core) before
 * anything starts. The sentences are checked through readConfig; one run of
 * the real binary checks the exit code and that stderr carries the sentence.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, helpText, readConfig, type Command } from '../../src/cli/settings.js';

const BIN = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));
const SECRET = 'sixteen-chars-or-more';

function refusal(command: Command, args: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    readConfig(args, env, command);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`queen-gateway ${command} ${args.join(' ')} was accepted`);
}

describe('queen-gateway core and gateway: settings', () => {
  it.each([
    ['core', [], 'The core needs the shared RPC secret: set --rpc-secret (or QUEEN_RPC_SECRET) to the same string of at least 16 characters on the core and every gateway.'],
    ['gateway', ['--core', 'core:7070', '--rpc-secret', 'short'], 'The gateway needs the shared RPC secret: set --rpc-secret (or QUEEN_RPC_SECRET) to the same string of at least 16 characters on the core and every gateway.'],
    ['gateway', ['--rpc-secret', SECRET], "The gateway needs its core: set --core (or QUEEN_CORE) to the core's HOST:PORT, e.g. --core core:7070."],
    ['gateway', ['--rpc-secret', SECRET, '--core', 'core'], 'The flag --core is wrong: "core" is not a core address; write HOST:PORT (for example core:7070) or the path of a Unix socket.'],
    ['gateway', ['--rpc-secret', SECRET, '--core', 'core:7070', '--engine', 'postgres'], 'The flag --engine is not a setting of "queen-gateway gateway"; run "queen-gateway gateway --help" to see its flags.'],
    ['core', ['--rpc-secret', SECRET, '--port', '9092'], 'The flag --port is not a setting of "queen-gateway core"; run "queen-gateway core --help" to see its flags.'],
    ['serve', ['--core', 'core:7070'], 'The flag --core is not a setting of "queen-gateway serve"; run "queen-gateway serve --help" to see its flags.'],
    ['core', ['--rpc-secret', SECRET, '--engine', 'postgres'], '--engine postgres needs a database: set --database-url (or QUEEN_DATABASE_URL) to a URL such as postgres://user:pass@localhost:5432/queen.'],
  ] as const)('%s %j is refused with one sentence', (command, args, sentence) => {
    expect(refusal(command, [...args])).toBe(sentence);
  });

  it('takes the secret and the core from the environment, and ignores variables of other commands', () => {
    const env = { QUEEN_RPC_SECRET: SECRET, QUEEN_CORE: '[::1]:7171', QUEEN_ENGINE: 'postgres', QUEEN_RPC_PORT: 'not a port' };
    const config = readConfig([], env, 'gateway');
    expect(config).toMatchObject({ rpcSecret: SECRET, core: '[::1]:7171' });
    expect(readConfig(['--rpc-socket', '/run/queen/core.sock'], { QUEEN_RPC_SECRET: SECRET, QUEEN_PORT: 'nine' }, 'core')).toMatchObject({ rpcSocket: '/run/queen/core.sock', rpcPort: 7070 });
  });

  it('lists only its own flags in --help', () => {
    const core = helpText('core');
    expect(core).toMatch(/--rpc-port\s+QUEEN_RPC_PORT/);
    expect(core).toMatch(/--database-url\s+QUEEN_DATABASE_URL/);
    expect(core).not.toMatch(/--advertised-host/);
    const gateway = helpText('gateway');
    expect(gateway).toMatch(/--core\s+QUEEN_CORE/);
    expect(gateway).toMatch(/--advertised-host/);
    expect(gateway).not.toMatch(/--engine/);
  });

  it('the binary exits 2 with the sentence on stderr', async () => {
    const env = { ...process.env };
    delete env.QUEEN_RPC_SECRET;
    delete env.QUEEN_CORE;
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'gateway', '--rpc-secret', SECRET], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (c) => resolve({ code: c, stderr: err }));
    });
    expect(stderr.trim()).toBe("The gateway needs its core: set --core (or QUEEN_CORE) to the core's HOST:PORT, e.g. --core core:7070.");
    expect(code).toBe(2);
  }, 30_000);
});
