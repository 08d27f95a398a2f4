import type { FastifyInstance } from 'fastify';
import type { Core } from '../core/core.js';
import type { HttpMetrics } from '../operations/registry.js';

/** What every route file is given: the app to register on, the core, and the counters. */
export interface HttpApiContext {
  app: FastifyInstance;
  core: Core;
  metrics: HttpMetrics;
  /** How long GET /health waits for the core before answering 503. */
  healthTimeoutMs: number;
}
