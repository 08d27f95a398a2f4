/**
 * Runs one scenario program against one target and reads its JSON lines, and
 * starts the targets: the gateway on the memory engine, the gateway on
 * PostgreSQL, and Apache Kafka.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway } from '../support/gateway.js';
import { STEPS, type Client, type Step, type Toolchains } from './clients.js';

export type Status = 'pass' | 'fail' | 'unsupported';
export interface StepResult {
  step: Step;
  status: Status;
  detail: string;
}
export interface ScenarioRun {
  client: string;
  target: TargetName;
  seconds: number;
  steps: StepResult[];
}

export type TargetName = 'gateway-memory' | 'gateway-postgres' | 'apache-kafka';
export interface Target {
  name: TargetName;
  bootstrap: string;
  stop(): Promise<void>;
}

/** Starts one target; the gateways with a short initial rebalance delay, as Kafka is started. */
export async function startTarget(name: TargetName): Promise<Target> {
  if (name === 'apache-kafka') {
    const kafka = await startApacheKafka({ autoCreateTopics: false, initialRebalanceDelayMs: 0 });
    return { name, bootstrap: kafka.bootstrap, stop: () => kafka.stop() };
  }
  const [memory, postgres] = await engineMatrix();
  const entry = name === 'gateway-memory' ? memory! : postgres!;
  if (entry.skipReason !== null) throw new Error(`${name}: ${entry.skipReason}`);
  const gateway = await startGateway({ engine: entry.fresh(), groups: { initialRebalanceDelayMs: 0 } });
  return {
    name,
    bootstrap: gateway.bootstrap,
    stop: async () => {
      await gateway.stop();
      if (name === 'gateway-postgres') await releaseEngines();
    },
  };
}

/** Parses a program's output: the last line naming each step wins; steps never named fail. */
export function readSteps(output: string, ending: string): StepResult[] {
  const seen = new Map<Step, StepResult>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const parsed = JSON.parse(line) as { step?: string; status?: string; detail?: unknown };
      const step = STEPS.find((s) => s === parsed.step);
      const status = parsed.status === 'pass' || parsed.status === 'fail' || parsed.status === 'unsupported' ? parsed.status : null;
      if (step && status) seen.set(step, { step, status, detail: String(parsed.detail ?? '') });
    } catch {
      // Not one of ours: a client's own log line that happens to start with a brace.
    }
  }
  return STEPS.map((step) => seen.get(step) ?? { step, status: 'fail', detail: `not reported: ${ending}` });
}

/** Runs `client`'s program against `bootstrap`, killed after `timeoutMs`. */
export async function runScenario(client: Client, tools: Toolchains, target: Target, timeoutMs: number): Promise<ScenarioRun> {
  const prefix = `compat-${client.name.replace(/[^a-z0-9]/gi, '').toLowerCase()}-${randomBytes(3).toString('hex')}`;
  const [command, ...args] = client.command(tools);
  const started = Date.now();
  const child = spawn(command, [...args, target.bootstrap, prefix], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, COMPAT_TARGET: target.name } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const code = await new Promise<number | null>((resolve) => {
    child.on('close', (exit) => resolve(exit));
    child.on('error', (e) => {
      stderr += String(e);
      resolve(-1);
    });
  });
  clearTimeout(timer);
  const lastError = stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300);
  const ending = timedOut ? `killed after ${timeoutMs / 1000} s` : `exited ${code}${lastError ? `; stderr: ${lastError}` : ''}`;
  return { client: client.name, target: target.name, seconds: Math.round((Date.now() - started) / 100) / 10, steps: readSteps(stdout, ending) };
}
