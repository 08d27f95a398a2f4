import type { Core, QueueConfig } from '../core/core.js';

/**
 * Queen's queue options (POST /api/v1/configure) as the core holds them.
 * Queen's clients send the whole set every time (leaseTime, retryLimit,
 * priority, delayedProcessing, windowBuffer, maxSize, retentionSeconds,
 * completedRetentionSeconds, encryptionEnabled), so each is accepted; each is
 * either a core setting, kept as Queen metadata (it names or describes the
 * queue but changes nothing the core does). maxWaitTimeSeconds and
 * completedRetentionSeconds are core settings (maxWaitMs, completedRetentionMs:
 * what a pop passes over, src/core/native/pop.ts).
 */

export interface QueenOptions {
  leaseTime?: number;
  retryLimit?: number;
  delayedProcessing?: number;
  retentionSeconds?: number;
  priority?: number;
  retryDelay?: number;
  ttl?: number;
  deadLetterQueue?: boolean;
  dlqAfterMaxRetries?: boolean;
  retentionEnabled?: boolean;
  maxSize?: number;
  windowBuffer?: number;
  completedRetentionSeconds?: number;
  encryptionEnabled?: boolean;
  maxWaitTimeSeconds?: number;
  // The core's own settings, beside Queen's.
  dedupWindowSeconds?: number;
  retentionBytes?: number;
  maxMessageBytes?: number;
}

const seconds = { type: 'number', minimum: 0 } as const;
const count = { type: 'integer', minimum: 0 } as const;

export const QUEEN_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    leaseTime: { type: 'number', exclusiveMinimum: 0 },
    retryLimit: count,
    delayedProcessing: seconds,
    retentionSeconds: { type: 'number', minimum: -1 },
    priority: { type: 'integer' },
    retryDelay: count,
    ttl: count,
    deadLetterQueue: { type: 'boolean' },
    dlqAfterMaxRetries: { type: 'boolean' },
    retentionEnabled: { type: 'boolean' },
    maxSize: count,
    windowBuffer: seconds,
    completedRetentionSeconds: seconds,
    encryptionEnabled: { type: 'boolean' },
    maxWaitTimeSeconds: seconds,
    dedupWindowSeconds: count,
    retentionBytes: { type: 'integer', minimum: -1 },
    maxMessageBytes: { type: 'integer', minimum: 1 },
  },
} as const;

/** The options kept as metadata: Queen reports them back; maxSize and encryptionEnabled are acted on by the HTTP API (./queue-policies.ts). */
const METADATA_KEYS = ['priority', 'retryDelay', 'ttl', 'deadLetterQueue', 'dlqAfterMaxRetries', 'retentionEnabled', 'maxSize', 'encryptionEnabled'] as const;

export interface QueenMetadata {
  namespace?: string | null;
  task?: string | null;
  priority?: number;
  retryDelay?: number;
  ttl?: number;
  deadLetterQueue?: boolean;
  dlqAfterMaxRetries?: boolean;
  retentionEnabled?: boolean;
  /** Queen's cap on the messages not yet taken in queue mode (./capacity.ts); 0 = none. */
  maxSize?: number;
  /** Payloads sealed at rest with the server's key (./payload-cipher.ts). */
  encryptionEnabled?: boolean;
}

/** The core settings the options ask for. */
export function coreConfigOf(options: QueenOptions): Partial<QueueConfig> {
  const config: Partial<QueueConfig> = {};
  if (options.leaseTime !== undefined) config.leaseMs = Math.max(1, Math.round(options.leaseTime * 1000));
  if (options.retryLimit !== undefined) config.retryLimit = options.retryLimit;
  if (options.delayedProcessing !== undefined) config.delayedProcessingMs = Math.round(options.delayedProcessing * 1000);
  if (options.windowBuffer !== undefined) config.windowBufferMs = Math.round(options.windowBuffer * 1000);
  // Queen's retentionSeconds 0 means "keep": no retention; -1 says the same in Kafka's terms.
  if (options.retentionSeconds !== undefined) config.retentionMs = options.retentionSeconds <= 0 ? -1 : Math.round(options.retentionSeconds * 1000);
  if (options.maxWaitTimeSeconds !== undefined) config.maxWaitMs = Math.round(options.maxWaitTimeSeconds * 1000);
  if (options.completedRetentionSeconds !== undefined) config.completedRetentionMs = Math.round(options.completedRetentionSeconds * 1000);
  if (options.dedupWindowSeconds !== undefined) config.dedupWindowSeconds = options.dedupWindowSeconds;
  if (options.retentionBytes !== undefined) config.retentionBytes = options.retentionBytes;
  if (options.maxMessageBytes !== undefined) config.maxMessageBytes = options.maxMessageBytes;
  return config;
}

export function metadataOf(options: QueenOptions, namespace: string | null | undefined, task: string | null | undefined): QueenMetadata {
  const metadata: QueenMetadata = {};
  if (namespace !== undefined) metadata.namespace = namespace;
  if (task !== undefined) metadata.task = task;
  for (const key of METADATA_KEYS) if (options[key] !== undefined) (metadata as Record<string, unknown>)[key] = options[key];
  return metadata;
}

/** Queen metadata lives in the core's KV store, so every gateway sees it and it survives restarts. */
export const METADATA_NAMESPACE = 'queen.queues';

export async function readMetadata(core: Core, queues: string[]): Promise<QueenMetadata[]> {
  if (queues.length === 0) return [];
  const entries = await core.kvGetMany({ ns: METADATA_NAMESPACE, keys: queues });
  return entries.map((e) => (e?.value ?? {}) as QueenMetadata);
}

/** Options as Queen's configure answers them, from the core's config and the metadata. */
export function queenOptionsAnswer(config: QueueConfig, metadata: QueenMetadata) {
  return {
    priority: metadata.priority ?? 0,
    leaseTime: config.leaseMs / 1000,
    retryLimit: config.retryLimit,
    retryDelay: metadata.retryDelay ?? 1000,
    maxSize: metadata.maxSize ?? 0,
    ttl: metadata.ttl ?? 3600,
    deadLetterQueue: metadata.deadLetterQueue ?? false,
    dlqAfterMaxRetries: metadata.dlqAfterMaxRetries ?? false,
    delayedProcessing: config.delayedProcessingMs / 1000,
    windowBuffer: config.windowBufferMs / 1000,
    retentionSeconds: config.retentionMs < 0 ? 0 : config.retentionMs / 1000,
    completedRetentionSeconds: (config.completedRetentionMs ?? 0) / 1000,
    retentionEnabled: metadata.retentionEnabled ?? config.retentionMs >= 0,
    encryptionEnabled: metadata.encryptionEnabled ?? false,
    maxWaitTimeSeconds: (config.maxWaitMs ?? 0) / 1000,
    dedupWindowSeconds: config.dedupWindowSeconds,
    retentionBytes: config.retentionBytes,
    maxMessageBytes: config.maxMessageBytes,
  };
}
