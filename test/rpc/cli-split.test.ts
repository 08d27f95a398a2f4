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
    ['core', [], 'The core needs a way to authenticate the RPC: set --rpc-secret (or QUEEN_RPC_SECRET) to the same string of at least 16 characters on the core and every gateway, or give mutual TLS files (--rpc-tls-cert-file, --rpc-tls-key-file, --rpc-tls-ca-file), or both.'],
    ['gateway', ['--core', 'core:7070', '--rpc-secret', 'short'], 'The RPC secret is too short: set --rpc-secret (or QUEEN_RPC_SECRET) to the same string of at least 16 characters on the core and every gateway.'],
    ['core', ['--rpc-tls-cert-file', 'core.pem', '--rpc-tls-key-file', 'core.key'], "--rpc-tls-cert-file, --rpc-tls-key-file and --rpc-tls-ca-file go together: mutual TLS needs this side's certificate and key and the CA the other side's certificate must chain to; give all three, or none."],
    ['core', ['--rpc-tls-cert-file', 'core.pem', '--rpc-tls-key-file', 'core.key', '--rpc-tls-ca-file', 'ca.pem', '--rpc-socket', '/run/queen/core.sock'], "TLS on the RPC takes TCP: drop --rpc-socket and listen with --rpc-host and --rpc-port, or drop the --rpc-tls-* files (a Unix socket's file permissions decide who may connect)."],
    ['core', ['--rpc-secret', SECRET, '--rpc-handshake-timeout-ms', '0'], 'The flag --rpc-handshake-timeout-ms must be a whole number from 100 to 600000; got "0".'],
    ['core', ['--rpc-secret', SECRET, '--rpc-max-unauthenticated', 'many'], 'The flag --rpc-max-unauthenticated must be a whole number from 1 to 100000; got "many".'],
    ['gateway', ['--rpc-secret', SECRET, '--core', 'core:7070', '--rpc-max-unauthenticated', '5'], 'The flag --rpc-max-unauthenticated is not a setting of "queen-gateway gateway"; run "queen-gateway gateway --help" to see its flags.'],
    ['serve', ['--rpc-tls-ca-file', 'ca.pem'], 'The flag --rpc-tls-ca-file is not a setting of "queen-gateway serve"; run "queen-gateway serve --help" to see its flags.'],
    ['gateway', ['--rpc-secret', SECRET], "The gateway needs its core: set --core (or QUEEN_CORE) to the core's HOST:PORT, e.g. --core core:7070."],
    ['gateway', ['--rpc-secret', SECRET, '--core', 'core'], 'The flag --core is wrong: "core" is not a core address; write HOST:PORT (for example core:7070) or the path of a Unix socket.'],
    ['gateway', ['--rpc-secret', SECRET, '--core', 'core:7070', '--engine', 'postgres'], 'The flag --engine is not a setting of "queen-gateway gateway"; run "queen-gateway gateway --help" to see its flags.'],
    ['core', ['--rpc-secret', SECRET, '--port', '9092'], 'The flag --port is not a setting of "queen-gateway core"; run "queen-gateway core --help" to see its flags.'],
    ['serve', ['--core', 'core:7070'], 'The flag --core is not a setting of "queen-gateway serve"; run "queen-gateway serve --help" to see its flags.'],
    ['core', ['--rpc-secret', SECRET, '--engine', 'postgres'], '--engine postgres needs a database: set --database-url (or QUEEN_DATABASE_URL) to a URL such as postgres://user:pass@localhost:5432/queen.'],
  ] as const)('%s %j is refused with one sentence', (command, args, sentence) => {
    expect(refusal(command, [...args])).toBe(sentence);
  });

  it('takes mutual TLS instead of the secret, and the handshake limits from flags or the environment', () => {
    const tls = ['--rpc-tls-cert-file', 'core.pem', '--rpc-tls-key-file', 'core.key', '--rpc-tls-ca-file', 'ca.pem'];
    expect(readConfig(tls, {}, 'core')).toMatchObject({ rpcSecret: undefined, rpcTlsCaFile: 'ca.pem', rpcHandshakeTimeoutMs: 5_000, rpcMaxUnauthenticated: 64 });
    expect(readConfig([...tls, '--core', 'core:7070'], { QUEEN_RPC_SECRET: SECRET }, 'gateway')).toMatchObject({ rpcSecret: SECRET, rpcTlsCertFile: 'core.pem' });
    expect(readConfig(['--rpc-handshake-timeout-ms', '1500'], { QUEEN_RPC_SECRET: SECRET, QUEEN_RPC_MAX_UNAUTHENTICATED: '8' }, 'core')).toMatchObject({ rpcHandshakeTimeoutMs: 1_500, rpcMaxUnauthenticated: 8 });
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
    expect(core).toMatch(/--rpc-handshake-timeout-ms\s+QUEEN_RPC_HANDSHAKE_TIMEOUT_MS .*\(default 5000\)/);
    expect(core).toMatch(/--rpc-max-unauthenticated\s+QUEEN_RPC_MAX_UNAUTHENTICATED .*\(default 64\)/);
    expect(core).toMatch(/--rpc-tls-ca-file .*the secret is optional, with both a gateway must pass both/);
    const gateway = helpText('gateway');
    expect(gateway).toMatch(/--core\s+QUEEN_CORE/);
    expect(gateway).toMatch(/--advertised-host/);
    expect(gateway).not.toMatch(/--engine/);
    expect(gateway).toMatch(/--rpc-tls-cert-file/);
    expect(gateway).not.toMatch(/--rpc-max-unauthenticated/);
  });

  it.each([
    [['gateway', '--rpc-secret', SECRET], "The gateway needs its core: set --core (or QUEEN_CORE) to the core's HOST:PORT, e.g. --core core:7070."],
    [['core', '--rpc-secret', SECRET, '--rpc-handshake-timeout-ms', '5s'], 'The flag --rpc-handshake-timeout-ms must be a whole number from 100 to 600000; got "5s".'],
    [['core', '--rpc-secret', SECRET, '--rpc-max-unauthenticated', '0'], 'The flag --rpc-max-unauthenticated must be a whole number from 1 to 100000; got "0".'],
  ])('the binary %j exits 2 with the sentence on stderr', async (args, sentence) => {
    const env = { ...process.env };
    delete env.QUEEN_RPC_SECRET;
    delete env.QUEEN_CORE;
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (c) => resolve({ code: c, stderr: err }));
    });
    expect(stderr.trim()).toBe(sentence);
    expect(code).toBe(2);
  }, 30_000);
});
