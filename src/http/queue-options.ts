import type { Core, QueueConfig } from '../core/core.js';
import { HttpError } from './errors.js';

/**
 * Queen's queue options (POST /api/v1/configure) as the core holds them.
 * Queen's clients send the whole set every time (leaseTime, retryLimit,
 * priority, delayedProcessing, windowBuffer, maxSize, retentionSeconds,
 * completedRetentionSeconds, encryptionEnabled), so each is accepted; each is
 * either a core setting, kept as Queen metadata (it names or describes the
 * queue but changes nothing the core does), or, when it asks for a behaviour
 * the core lacks, refused with 501 naming the option. Queen's defaults (0,
 * false) always pass, so a client that leaves an option alone is never
 * refused.
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

/** Options that ask for a behaviour the core does not have, with what each would have done. */
const NOT_BUILT: ReadonlyArray<[keyof QueenOptions, (value: unknown) => boolean, string]> = [
  ['completedRetentionSeconds', (v) => typeof v === 'number' && v > 0, 'deleting consumed messages early; records are kept by retentionSeconds'],
  ['maxWaitTimeSeconds', (v) => typeof v === 'number' && v > 0, 'evicting messages that waited longer than this'],
];

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

/** The core settings the options ask for; a 501 for any option whose behaviour the core lacks. */
export function coreConfigOf(options: QueenOptions): Partial<QueueConfig> {
  for (const [key, asks, what] of NOT_BUILT) {
    if (asks(options[key])) {
      throw new HttpError(501, 'not_supported', `Queue option ${key}=${JSON.stringify(options[key])} (${what}) is not built in this gateway; leave it at Queen's default (0 or false). src/http/README.md lists what is not built.`);
    }
  }
  const config: Partial<QueueConfig> = {};
  if (options.leaseTime !== undefined) config.leaseMs = Math.max(1, Math.round(options.leaseTime * 1000));
  if (options.retryLimit !== undefined) config.retryLimit = options.retryLimit;
  if (options.delayedProcessing !== undefined) config.delayedProcessingMs = Math.round(options.delayedProcessing * 1000);
  if (options.windowBuffer !== undefined) config.windowBufferMs = Math.round(options.windowBuffer * 1000);
  // Queen's retentionSeconds 0 means "keep": no retention; -1 says the same in Kafka's terms.
  if (options.retentionSeconds !== undefined) config.retentionMs = options.retentionSeconds <= 0 ? -1 : Math.round(options.retentionSeconds * 1000);
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
    completedRetentionSeconds: 0,
    retentionEnabled: metadata.retentionEnabled ?? config.retentionMs >= 0,
    encryptionEnabled: metadata.encryptionEnabled ?? false,
    maxWaitTimeSeconds: 0,
    dedupWindowSeconds: config.dedupWindowSeconds,
    retentionBytes: config.retentionBytes,
    maxMessageBytes: config.maxMessageBytes,
  };
}
