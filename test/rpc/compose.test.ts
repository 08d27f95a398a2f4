/**
 * compose/compose.yaml is never run here (no Docker), so this reads it and
 * holds it to the CLI: every service that runs queen-gateway names a command
 * the CLI has, sets only QUEEN_* variables that command takes, and its
 * settings (with compose's ${VAR:-default} filled in) pass the CLI's own
 * validation. The gateway's core address and the core's database URL must
 * name services of the file, and compose/README.md documents every variable.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { COMMANDS, envName, readConfig, SETTINGS, takesSetting, type Command } from '../../src/cli/settings.js';
import { parseRpcAddress } from '../../src/rpc/address.js';

const README = readFileSync(fileURLToPath(new URL('../../compose/README.md', import.meta.url)), 'utf8');

interface Service {
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: unknown;
  healthcheck?: { test?: string[] | string };
}

function composeFile(name: string): Record<string, Service> {
  const path = fileURLToPath(new URL(`../../compose/${name}`, import.meta.url));
  return (parse(readFileSync(path, 'utf8'), { merge: true }) as { services: Record<string, Service> }).services;
}

/** Compose's interpolation as a user's shell would leave it: defaults filled in, required values given. */
function interpolate(value: string): string {
  return value.replace(/\$\{([A-Z_]+)(?::?([-?])([^}]*))?\}/g, (_all, name: string, op: string | undefined, rest: string) => {
    if (op === '-') return rest;
    if (name === 'QUEEN_RPC_SECRET') return 'a-secret-of-at-least-sixteen-characters';
    return `value-of-${name}`;
  });
}

function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  const entries = Array.isArray(env) ? env.map((line) => line.split(/=(.*)/s, 2) as [string, string]) : Object.entries(env).map(([k, v]) => [k, String(v ?? '')]);
  return Object.fromEntries(entries.map(([k, v]) => [k, interpolate(v!)]));
}

/** The queen-gateway command a service runs, and the arguments after it; null for other images. */
function queenCommand(service: Service): { command: string; args: string[] } | null {
  const words = typeof service.command === 'string' ? service.command.split(/\s+/) : service.command ?? [];
  const at = words.findIndex((w) => w.endsWith('queen-gateway.js') || w === 'queen-gateway');
  if (at < 0) return null;
  return { command: words[at + 1] ?? 'serve', args: words.slice(at + 2) };
}

interface QueenService {
  name: string;
  service: Service;
  run: { command: string; args: string[] };
}

function queenServicesOf(services: Record<string, Service>): QueenService[] {
  return Object.entries(services)
    .map(([name, service]) => ({ name, service, run: queenCommand(service) }))
    .filter((s): s is QueenService => s.run !== null);
}

/** Checks every file shares: commands and settings the CLI takes, addresses naming services, the README. */
function describeComposeFile(file: string, services: Record<string, Service>): void {
  const queenServices = queenServicesOf(services);

  it.each(queenServices.map((s) => [s.name, s] as const))(`${file}: service %s runs a command the CLI has, with settings it takes`, (_name, { service, run }) => {
    expect(Object.keys(COMMANDS)).toContain(run.command);
    const command = run.command as Command;
    const env = environmentOf(service);
    const known = new Map<string, string>(SETTINGS.map((s) => [envName(s.flag), s.flag]));
    for (const variable of Object.keys(env).filter((v) => v.startsWith('QUEEN_'))) {
      expect(known.has(variable), `${variable} is not a setting of the CLI`).toBe(true);
      expect(takesSetting(command, known.get(variable)!), `${variable} is not a setting of "${command}"`).toBe(true);
    }
    // The CLI's own validation, as the container would run it.
    expect(() => readConfig(run.args, env, command)).not.toThrow();
  });

  it(`${file}: points each gateway at a core's RPC port and each core at the PostgreSQL service`, () => {
    const cores = queenServices.filter((s) => s.run.command === 'core');
    const postgresService = Object.entries(services).find(([, s]) => s.image?.startsWith('postgres'))![0];
    for (const gateway of queenServices.filter((s) => s.run.command === 'gateway')) {
      const gatewayConfig = readConfig(gateway.run.args, environmentOf(gateway.service), 'gateway');
      const address = parseRpcAddress(gatewayConfig.core!) as { host: string; port: number };
      const core = cores.find((c) => c.name === address.host);
      expect(core, `${gateway.name} names a core service`).toBeDefined();
      const coreConfig = readConfig(core!.run.args, environmentOf(core!.service), 'core');
      expect(address.port).toBe(coreConfig.rpcPort);
      expect(gatewayConfig.rpcSecret).toBe(coreConfig.rpcSecret);
      expect(new URL(coreConfig.databaseUrl!).hostname).toBe(postgresService);
    }
  });

  it(`${file}: is documented: compose/README.md explains every QUEEN_* variable the file sets`, () => {
    const variables = new Set(queenServices.flatMap((s) => Object.keys(environmentOf(s.service))).filter((v) => v.startsWith('QUEEN_')));
    for (const variable of variables) expect(README, `${variable} is not in compose/README.md`).toContain(variable);
  });
}

describe('compose/compose.yaml', () => {
  const services = composeFile('compose.yaml');

  it('brings up PostgreSQL, a core and a gateway', () => {
    expect(Object.values(services).some((s) => s.image?.startsWith('postgres'))).toBe(true);
    expect(queenServicesOf(services).map((s) => s.run.command).sort()).toEqual(['core', 'gateway']);
  });

  describeComposeFile('compose.yaml', services);
});

describe('compose/cluster.yaml', () => {
  const services = composeFile('cluster.yaml');
  const queenServices = queenServicesOf(services);
  const gateways = queenServices.filter((s) => s.run.command === 'gateway');

  it('brings up PostgreSQL, Redis, two cores and three gateways, each with a health check', () => {
    expect(Object.values(services).some((s) => s.image?.startsWith('postgres'))).toBe(true);
    expect(Object.values(services).some((s) => s.image?.startsWith('redis'))).toBe(true);
    expect(queenServices.map((s) => s.run.command).sort()).toEqual(['core', 'core', 'gateway', 'gateway', 'gateway']);
    for (const [name, service] of Object.entries(services)) expect(service.healthcheck?.test, `${name} has a health check`).toBeDefined();
  });

  it('registers every gateway and core with the Redis service, and gives each gateway its own advertised address', () => {
    const redisService = Object.entries(services).find(([, s]) => s.image?.startsWith('redis'))![0];
    for (const s of queenServices) {
      const config = readConfig(s.run.args, environmentOf(s.service), s.run.command as Command);
      expect(new URL(config.redisUrl!).hostname, `${s.name}'s Redis`).toBe(redisService);
    }
    const advertised = gateways.map((g) => {
      const config = readConfig(g.run.args, environmentOf(g.service), 'gateway');
      return `${config.advertisedHost}:${config.advertisedPort ?? config.port}`;
    });
    expect(new Set(advertised).size).toBe(gateways.length);
  });

  it('spreads the gateways over both cores', () => {
    const used = new Set(gateways.map((g) => readConfig(g.run.args, environmentOf(g.service), 'gateway').core));
    expect(used.size).toBe(2);
  });

  describeComposeFile('cluster.yaml', services);
});
