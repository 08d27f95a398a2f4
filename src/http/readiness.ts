/**
 * Readiness: whether this process can serve now. Its store answers (a
 * listing, within a deadline, so a hung database cannot hang the probe) and
 * every listener it serves on is accepting; a process that is shutting down
 * is not ready, so a load balancer stops sending it work before it closes.
 * Liveness (/health) is only "the process runs": an orchestrator restarts a
 * process whose liveness fails, and restarting gateways cures no database
 * outage. Shared by the HTTP API's /ready and any other process's health
 * listener (the CLI composes one for `core`).
 */
import type { Core } from '../core/core.js';
import { coreProblem } from '../operations/health.js';

export interface ReadinessProbe {
  core: Core;
  /** What holds the data, as operators name it: "memory", "postgres", or "core at HOST:PORT" for a core over the RPC. */
  engine: string;
  /** Each listener of this process by name ("kafka", "http", "rpc") and whether it accepts connections now. */
  listeners: () => Record<string, boolean>;
  /** How long the store may take to answer before the process counts as not ready. */
  timeoutMs: number;
  /** Aborted once the process begins to shut down. */
  stopping?: AbortSignal;
}

export interface Readiness {
  ready: boolean;
  engine: string;
  /** Whether the store answered within the deadline. */
  reachable: boolean;
  listeners: Record<string, boolean>;
  /** Why not ready, as sentences; empty when ready. */
  problems: string[];
}

export async function checkReadiness(probe: ReadinessProbe): Promise<Readiness> {
  const problems: string[] = [];
  if (probe.stopping?.aborted) problems.push('The process is shutting down.');
  const unreachable = await coreProblem(probe.core, probe.timeoutMs, `The core (${probe.engine})`);
  if (unreachable !== null) problems.push(unreachable);
  const reachable = unreachable === null;
  const listeners = probe.listeners();
  const closed = Object.entries(listeners).filter(([, open]) => !open).map(([name]) => name);
  if (closed.length > 0) problems.push(`Not accepting connections: ${closed.join(', ')}.`);
  return { ready: problems.length === 0, engine: probe.engine, reachable, listeners, problems };
}
