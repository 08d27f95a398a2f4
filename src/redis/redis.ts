import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { redisUrlProblem, redisWhere } from './redis-url.js';

/**
 * Redis carries what several gateways and cores say to each other (the node
 * registry, cross-node wake-ups); never data. So a Redis that goes away must
 * cost promptness, not correctness: commands fail at once while it is away
 * (no offline queue, one retry), the connection is remade in the background,
 * and each owner decides how to degrade. One line is logged when Redis goes
 * away and one when it is back, not one per failed command.
 */

export interface RedisConnection {
  redis: Redis;
  /** The URL without its password, for logs and errors. */
  where: string;
  close(): Promise<void>;
}

/** How long the first connection may take before the start is refused. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Reconnect attempts back off to at most this. */
const MAX_RECONNECT_DELAY_MS = 1_000;

/**
 * Connects to Redis, or throws a sentence saying why not (a start with a
 * Redis URL that does not work is refused rather than run half-clustered).
 * `role` names the connection in logs ("registry", "wake-ups").
 */
export async function openRedis(url: string, role: string, log: Logger): Promise<RedisConnection> {
  const problem = redisUrlProblem(url);
  if (problem) throw new Error(problem);
  const where = redisWhere(url);
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    connectionName: `queen-${role}`,
  });
  let away = false;
  let lastError = '';
  redis.on('error', (e: Error) => {
    lastError = e.message;
    if (away) return;
    away = true;
    log.warn({ redis: where, role, err: e.message }, 'Redis is not answering; carrying on without it until it is back');
  });
  redis.on('ready', () => {
    if (!away) return;
    away = false;
    log.info({ redis: where, role }, 'Redis is back');
  });
  try {
    await redis.connect();
  } catch (e) {
    redis.disconnect();
    const reason = lastError || (e as Error).message;
    throw new Error(`Redis at ${where} could not be reached (${reason}); start Redis there or correct --redis-url.`);
  }
  return {
    redis,
    where,
    async close() {
      redis.disconnect();
    },
  };
}
