/**
 * The Dockerfile, built without Docker (no engine runs here): the test reads
 * its instructions (test/support/dockerfile.ts) and performs them in a clean
 * temporary directory, one folder per stage standing for its file system.
 * The build stage gets the files its COPY lines name from the build context
 * (tracked files less .dockerignore, taken at the start) and runs its
 * RUN lines (npm ci from the local npm cache where it can, the build, the
 * prune); the final stage gets what its COPY --from lines take. Then the
 * image's CMD runs from there as an unprivileged user, a record goes in and
 * out over Kafka with kcat, and the HEALTHCHECK command answers healthy while
 * it runs and unhealthy once it has stopped.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDockerfile, type CopyStep, type Stage } from '../support/dockerfile.js';
import { runKcat } from '../support/kcat.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'queen-image-'));
// The unprivileged user must reach the final stage's files through it.
chmodSync(work, 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const STEP_TIMEOUT_MS = 10 * 60_000;

/** A stage's file system: an absolute path in the image is this folder plus that path. */
function rootOf(stages: Stage[], stage: Stage): string {
  return join(work, `stage-${stages.indexOf(stage)}`);
}

function inStage(stages: Stage[], stage: Stage, path: string): string {
  return join(rootOf(stages, stage), isAbsolute(path) ? path : join(stage.workdir, path));
}

/**
 * The build context as `docker build .` sends it, taken once at the start:
 * the files git tracks (what a clean clone has), less what .dockerignore
 * leaves out (its plain names and `*.ext` patterns, which is all it uses).
 */
async function buildContext(): Promise<string> {
  const context = join(work, 'context');
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const isIgnored = (file: string) =>
    ignored.some((pattern) => (pattern.startsWith('*') ? file.endsWith(pattern.slice(1)) : file === pattern || file.startsWith(`${pattern}/`)));
  const { stdout } = await run('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter((f) => f !== '' && !isIgnored(f) && existsSync(join(ROOT, f)))) {
    mkdirSync(dirname(join(context, file)), { recursive: true });
    cpSync(join(ROOT, file), join(context, file));
  }
  return context;
}

async function copy(stages: Stage[], stage: Stage, step: CopyStep, context: string): Promise<void> {
  const destination = inStage(stages, stage, step.destination);
  const intoFolder = step.destination.endsWith('/') || step.sources.length > 1;
  for (const source of step.sources) {
    let path: string;
    if (step.from === undefined) {
      path = join(context, source);
      expect(existsSync(path), `COPY ${source}: the build context has it (tracked by git, not in .dockerignore)`).toBe(true);
    } else {
      const from = stages.find((s) => s.name === step.from);
      expect(from, `COPY --from=${step.from} names a stage`).toBeDefined();
      path = inStage(stages, from!, source);
      expect(existsSync(path), `COPY --from=${step.from} ${source}: the ${step.from} stage made it`).toBe(true);
    }
    const target = statSync(path).isFile() && intoFolder ? join(destination, basename(path)) : destination;
    mkdirSync(dirname(target), { recursive: true });
    cpSync(path, target, { recursive: true, verbatimSymlinks: true });
  }
}

/** Performs a stage's COPY and RUN lines in order. */
async function buildStage(stages: Stage[], stage: Stage, context: string): Promise<void> {
  mkdirSync(inStage(stages, stage, '.'), { recursive: true });
  for (const step of stage.steps) {
    if ('copy' in step) {
      await copy(stages, stage, step.copy, context);
      continue;
    }
    // prefer-offline: npm takes what the local cache has and fetches only what it lacks. Global
    // installs go to the stage's own /usr/local (the image's npm prefix), found first on the PATH.
    const prefix = join(rootOf(stages, stage), 'usr', 'local');
    await run('sh', ['-c', step.run], {
      cwd: inStage(stages, stage, '.'),
      env: {
        ...process.env,
        ...stage.env,
        PATH: `${join(prefix, 'bin')}:${process.env['PATH']}`,
        npm_config_prefix: prefix,
        npm_config_prefer_offline: 'true',
        npm_config_update_notifier: 'false',
      },
      timeout: STEP_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`RUN ${step.run} failed: ${e.message}\n${(e.stdout ?? '').slice(-3000)}\n${(e.stderr ?? '').slice(-3000)}`);
    });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The image's USER stands for "not root": root runs the command as nobody
 * (65534; this machine has no `node` user), through setpriv, which execs it,
 * so signals reach node itself as they do in a container; anyone else
 * already is not root.
 */
function asUnprivileged(words: string[]): string[] {
  return process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--', ...words] : words;
}

async function healthcheck(final: Stage, cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  const [command, ...args] = asUnprivileged(final.healthcheck!);
  return run(command!, args, { cwd, env, timeout: 30_000 }).then(
    () => 0,
    (e: { code?: number }) => e.code ?? -1,
  );
}

describe('the Dockerfile, built and run without Docker', () => {
  it('builds in a clean directory, runs as an unprivileged user from the final stage alone, serves Kafka and answers its health check', { timeout: 30 * 60_000 }, async () => {
    const stages = parseDockerfile(join(ROOT, 'Dockerfile'));
    expect(stages.map((s) => s.image)).toEqual(['node:20-bookworm', 'node:20-bookworm-slim']);
    const [build, final] = stages as [Stage, Stage];
    expect(final.user, 'the final stage runs as a user of its own').toBeDefined();
    expect(final.user).not.toMatch(/^(root|0)$/);
    expect(final.exposed).toEqual(expect.arrayContaining([9092, 6632, 7070]));

    const context = await buildContext();
    await buildStage(stages, build, context);
    await buildStage(stages, final, context);

    const app = inStage(stages, final, '.');
    expect(readdirSync(app).sort()).toEqual(['bin', 'dist', 'node_modules', 'package.json']);
    // Production dependencies only, with the native modules built inside the build stage.
    const modules = readdirSync(join(app, 'node_modules'));
    expect(modules).not.toContain('tsx');
    expect(modules).not.toContain('typescript');
    expect(modules).toContain('zstd-napi');

    const [kafkaPort, httpPort] = [await freePort(), await freePort()];
    // Ports and host of this test's own; the Dockerfile's ENV and CMD otherwise as the image has them.
    const env = { PATH: process.env['PATH']!, ...final.env, QUEEN_HTTP_PORT: String(httpPort) };
    const [command, ...args] = asUnprivileged([...final.cmd!, '--host', '127.0.0.1', '--port', String(kafkaPort), '--advertised-host', '127.0.0.1']);
    const gateway = spawn(command!, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    gateway.stdout.on('data', (d: Buffer) => (output += d));
    gateway.stderr.on('data', (d: Buffer) => (output += d));
    const exited = new Promise<number | null>((resolve) => gateway.on('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the image's command did not log "ready" within 60 s: ${output}`)), 60_000);
        gateway.on('exit', (code) => reject(new Error(`the image's command exited with ${code}: ${output}`)));
        gateway.stdout.on('data', () => {
          if (output.includes('"bootstrap"')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const bootstrap = `127.0.0.1:${kafkaPort}`;
      const produced = await runKcat(['-P', '-b', bootstrap, '-t', 'from-the-image', '-p', '0'], 'built without docker\n');
      expect(produced.code, produced.stderr).toBe(0);
      const consumed = await runKcat(['-C', '-b', bootstrap, '-t', 'from-the-image', '-p', '0', '-o', 'beginning', '-c', '1', '-e', '-f', '%o %s\n']);
      expect(consumed.code, consumed.stderr).toBe(0);
      expect(consumed.stdout).toBe('0 built without docker\n');

      expect(await healthcheck(final, app, env), 'HEALTHCHECK while the gateway runs').toBe(0);
    } finally {
      gateway.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(await healthcheck(final, app, env), 'HEALTHCHECK once the gateway has stopped').not.toBe(0);
  });
});
