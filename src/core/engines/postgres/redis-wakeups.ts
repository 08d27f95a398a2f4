import type { Logger } from 'pino';
import { openRedis, type RedisConnection } from '../../../redis/redis.js';
import type { WakeupRelay, Wakeups } from './wakeups.js';

/**
 * Cross-node wake-ups over Redis pub/sub, so PostgreSQL carries only data:
 * after an append commits, the core publishes the partitions it touched on
 * its schema's channel; every core subscribes and wakes its own waiters.
 * Two connections, since a subscribed Redis connection can do nothing else.
 *
 * Redis away: the publisher reports it cannot publish and appends NOTIFY
 * instead (every core still LISTENs); the subscriber's core polls until its
 * subscription is back (wakeups.ts). README.md has the measurements that
 * made this the default when a Redis URL is given.
 */
export class RedisWakeupRelay implements WakeupRelay {
  private constructor(
    private readonly publisher: RedisConnection,
    private readonly subscriber: RedisConnection,
    private readonly channel: string,
  ) {}

  static async open(url: string, channel: string, wakeups: Wakeups, log: Logger): Promise<RedisWakeupRelay> {
    const publisher = await openRedis(url, 'wake-ups', log);
    let subscriber: RedisConnection;
    try {
      subscriber = await openRedis(url, 'wake-up subscription', log);
      await subscriber.redis.subscribe(channel);
    } catch (e) {
      await publisher.close();
      throw e;
    }
    subscriber.redis.on('message', (_channel: string, payload: string) => wakeups.deliver(payload));
    subscriber.redis.on('close', () => wakeups.subscriptionLost());
    // ioredis subscribes again on reconnect before it reports ready.
    subscriber.redis.on('ready', () => wakeups.subscriptionBack());
    return new RedisWakeupRelay(publisher, subscriber, channel);
  }

  get canPublish(): boolean {
    return this.publisher.redis.status === 'ready';
  }

  publish(payload: string): void {
    // A publish lost on the way costs a waiter at most its deadline; nothing to retry.
    this.publisher.redis.publish(this.channel, payload).catch(() => {});
  }

  async close(): Promise<void> {
    await Promise.all([this.publisher.close(), this.subscriber.close()]);
  }
}
