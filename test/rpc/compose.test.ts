/**
 * compose/compose.yaml is never run here (no Docker), so this reads it and
 * holds it to the CLI: every service that runs queen-gateway names a command
 * the CLI has, sets only QUEEN_* variables that command takes, and its
 * settings (with compose's ${VAR:-default} filled in) pass the CLI's own
 * validation. The gateway's core address and the core's database URL must
 * name services of the file, and compose/README.md documents every variable.
 * Every Queen service runs the image built from the repository's Dockerfile
 * (never a mounted checkout), every service has a health check, starts only
 * once what it uses is healthy, and publishes every port it listens on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { COMMANDS, envName, readConfig, SETTINGS, takesSetting, type Command } from '../../src/cli/settings.js';
import { parseRpcAddress } from '../../src/rpc/address.js';

const README = readFileSync(fileURLToPath(new URL('../../compose/README.md', import.meta.url)), 'utf8');

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] | string };
  ports?: (string | number)[];
  volumes?: string[];
}

const COMPOSE_DIRECTORY = fileURLToPath(new URL('../../compose/', import.meta.url));
const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));

function composeFile(name: string): Record<string, Service> {
  const path = join(COMPOSE_DIRECTORY, name);
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

/** The container ports a service publishes, from "HOST:CONTAINER", "IP:HOST:CONTAINER" or "CONTAINER". */
function publishedPorts(service: Service): { host: string; container: number }[] {
  return (service.ports ?? []).map((entry) => {
    const parts = String(entry).split(':');
    const container = Number(parts.at(-1));
    return { host: parts.slice(0, -1).join(':') || String(container), container };
  });
}

/** The ports a Queen service listens on, as the CLI reads its settings. */
function listeningPorts(s: QueenService): number[] {
  const config = readConfig(s.run.args, environmentOf(s.service), s.run.command as Command);
  if (s.run.command === 'core') return [config.rpcPort];
  return [config.port, ...(config.http ? [config.httpPort] : [])];
}

/** Which services a service's settings name as hosts (its core, its database, its Redis). */
function servicesUsed(s: QueenService, names: readonly string[]): string[] {
  const config = readConfig(s.run.args, environmentOf(s.service), s.run.command as Command);
  const hosts = [
    config.core === undefined ? undefined : (parseRpcAddress(config.core) as { host?: string }).host,
    config.databaseUrl === undefined ? undefined : new URL(config.databaseUrl).hostname,
    config.redisUrl === undefined ? undefined : new URL(config.redisUrl).hostname,
  ];
  return hosts.filter((h): h is string => h !== undefined && names.includes(h));
}

/** Checks every file shares: commands and settings the CLI takes, addresses naming services, the README. */
function describeComposeFile(file: string, services: Record<string, Service>): void {
  const queenServices = queenServicesOf(services);

  it.each(queenServices.map((s) => [s.name, s] as const))(`${file}: service %s runs the image built from the repository's Dockerfile, not a mounted checkout`, (_name, { service }) => {
    const context = typeof service.build === 'string' ? service.build : service.build?.context;
    expect(context, 'build context').toBeDefined();
    const dockerfile = typeof service.build === 'object' ? service.build.dockerfile ?? 'Dockerfile' : 'Dockerfile';
    expect(join(COMPOSE_DIRECTORY, context!, '/')).toBe(REPOSITORY_ROOT);
    expect(existsSync(join(COMPOSE_DIRECTORY, context!, dockerfile))).toBe(true);
    expect(service.volumes ?? [], 'no bind mount of the checkout').toEqual([]);
  });

  it(`${file}: every service has a health check and waits for what it depends on to be healthy`, () => {
    for (const [name, service] of Object.entries(services)) {
      expect(service.healthcheck?.test, `${name} has a health check`).toBeDefined();
      const dependsOn = service.depends_on ?? {};
      expect(Array.isArray(dependsOn), `${name}'s depends_on names a condition for each service`).toBe(false);
      for (const [other, { condition }] of Object.entries(dependsOn)) {
        expect(Object.keys(services), `${name} depends on a service of the file`).toContain(other);
        expect(condition, `${name} waits for ${other}`).toBe('service_healthy');
      }
    }
    for (const s of queenServices) {
      for (const used of servicesUsed(s, Object.keys(services))) {
        expect(Object.keys(s.service.depends_on ?? {}), `${s.name} uses ${used}, so it starts once ${used} is healthy`).toContain(used);
      }
    }
  });

  it(`${file}: each Queen service's health check asks the port it listens on, and every port is published once`, () => {
    for (const s of queenServices) {
      const ports = listeningPorts(s);
      const published = publishedPorts(s.service).map((p) => p.container);
      for (const port of ports) expect(published, `${s.name} publishes ${port}`).toContain(port);
      const test = [s.service.healthcheck?.test ?? []].flat().join(' ');
      const checked = s.run.command === 'core' ? ports[0]! : readConfig(s.run.args, environmentOf(s.service), 'gateway').httpPort;
      // A gateway's check asks liveness (/health) or readiness (/ready) of its own HTTP port.
      if (s.run.command === 'core') expect(test, `${s.name}'s health check`).toContain(`connect(${checked}`);
      else expect(test, `${s.name}'s health check`).toMatch(new RegExp(`:${checked}/(health|ready)\\b`));
    }
    const hostPorts = Object.values(services).flatMap((service) => publishedPorts(service).map((p) => p.host));
    expect(new Set(hostPorts).size, `host ports ${hostPorts.join(', ')} are each published once`).toBe(hostPorts.length);
  });

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

  it('brings up PostgreSQL, Redis, two cores and three gateways', () => {
    expect(Object.values(services).some((s) => s.image?.startsWith('postgres'))).toBe(true);
    expect(Object.values(services).some((s) => s.image?.startsWith('redis'))).toBe(true);
    expect(queenServices.map((s) => s.run.command).sort()).toEqual(['core', 'core', 'gateway', 'gateway', 'gateway']);
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
