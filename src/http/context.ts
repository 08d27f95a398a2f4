import type { FastifyInstance } from 'fastify';
import type { Core } from '../core/core.js';
import type { HttpMetrics } from '../operations/registry.js';
import type { Maintenance } from './maintenance.js';
import type { PayloadCipher } from './payload-cipher.js';

/** What every route file is given: the app to register on, the core, and the counters. */
export interface HttpApiContext {
  app: FastifyInstance;
  core: Core;
  metrics: HttpMetrics;
  /** How long GET /ready waits for the core before answering 503. */
  healthTimeoutMs: number;
  /** What holds the data, as /health and /ready name it, and the other listeners /ready reports. */
  readiness: { engine: string; listeners: () => Record<string, boolean> };
  /** Aborted when the server begins to close: long-polls answer at once with what they have. */
  stopping: AbortSignal;
  /** Queen's push and pop maintenance modes. */
  maintenance: Maintenance;
  /** Seals and opens the payloads of queues configured with encryptionEnabled; null without a key. */
  payloads: PayloadCipher | null;
}
