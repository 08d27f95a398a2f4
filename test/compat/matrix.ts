/**
 * Runs one scenario program against one target and reads its JSON lines, and
 * starts the targets: the gateway on the memory engine, the gateway on
 * PostgreSQL, and Apache Kafka.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { startApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway } from '../support/gateway.js';
import { RawConnection } from '../support/raw-connection.js';
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
  /** The API keys its ApiVersions answer lists. */
  apis: ReadonlySet<number>;
  stop(): Promise<void>;
}

/** Starts one target; the gateways with a short initial rebalance delay, as Kafka is started. */
export async function startTarget(name: TargetName): Promise<Target> {
  if (name === 'apache-kafka') {
    const kafka = await startApacheKafka({ autoCreateTopics: false, initialRebalanceDelayMs: 0 });
    return { name, bootstrap: kafka.bootstrap, apis: await servedApis(kafka.port), stop: () => kafka.stop() };
  }
  const [memory, postgres] = await engineMatrix();
  const entry = name === 'gateway-memory' ? memory! : postgres!;
  if (entry.skipReason !== null) throw new Error(`${name}: ${entry.skipReason}`);
  const gateway = await startGateway({ engine: entry.fresh(), groups: { initialRebalanceDelayMs: 0 } });
  return {
    name,
    bootstrap: gateway.bootstrap,
    apis: await servedApis(gateway.port),
    stop: async () => {
      await gateway.stop();
      if (name === 'gateway-postgres') await releaseEngines();
    },
  };
}

async function createTopics(bootstrap: string, topics: { topic: string; numPartitions: number }[]): Promise<void> {
  const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics, waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/** The API keys a broker lists in its ApiVersions answer (v3). */
async function servedApis(port: number): Promise<Set<number>> {
  const connection = await RawConnection.open(port);
  try {
    const body = (await connection.request(18, 3, { clientSoftwareName: 'queen-compat', clientSoftwareVersion: '1' })) as { apiKeys: { apiKey: number }[] };
    return new Set(body.apiKeys.map((k) => k.apiKey));
  } finally {
    connection.destroy();
  }
}

/** The steps that need an API the target may not serve, and that API's key. */
const NEEDS: Partial<Record<Step, { apiKey: number; api: string; what: string }>> = {
  kip848: { apiKey: 68, api: 'ConsumerGroupHeartbeat', what: 'KIP-848 consumer groups' },
  'share-group': { apiKey: 76, api: 'ShareGroupHeartbeat', what: 'share groups' },
};

/** A failed step whose API the target does not serve is the target's "unsupported", not the client's failure. */
export function blameTarget(steps: StepResult[], target: Pick<Target, 'name' | 'apis'>): StepResult[] {
  return steps.map((s) => {
    const need = NEEDS[s.step];
    if (!need || s.status !== 'fail' || target.apis.has(need.apiKey)) return s;
    return { ...s, status: 'unsupported', detail: `${target.name} does not serve ${need.what} (no ${need.api} in its ApiVersions); the client said: ${s.detail}` };
  });
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
  if (client.precreate) await createTopics(target.bootstrap, client.precreate.map((t) => ({ topic: `${prefix}-${t.suffix}`, numPartitions: t.partitions })));
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
  return { client: client.name, target: target.name, seconds: Math.round((Date.now() - started) / 100) / 10, steps: blameTarget(readSteps(stdout, ending), target) };
}
