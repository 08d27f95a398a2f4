import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisConnection } from '../redis/redis.js';

/**
 * The gateways of one cluster, as every gateway sees them: each registers
 * itself in Redis under its node id with a TTL and renews it on a heartbeat;
 * the live nodes are those whose entry has not expired. Metadata and
 * DescribeCluster list them, and partition leadership is spread over them
 * (leadership.ts).
 *
 * Redis layout, under a key prefix (default "queen"):
 *   <prefix>:node:<id>    this node's entry (JSON), expiring after the TTL
 *   <prefix>:nodes        the set of node ids that have registered (entries
 *                         that expired are pruned from it on the next read)
 *   <prefix>:cluster-id   the cluster id the first gateway chose, which the
 *                         others adopt so clients see one cluster
 *
 * Without Redis (a single gateway) the view is this node alone, as before.
 * When Redis stops answering, the last list read is kept for one TTL (a
 * short blip moves no partition), then the view falls back to this node
 * alone: every partition is offered here, which is always true (any gateway
 * serves any partition), so clients keep working through whichever gateway
 * they reach. No data goes through Redis, so none is lost with it.
 *
 * A gateway that cannot serve (its core is gone: `serving` says no for a
 * heartbeat interval) withdraws its entry and stops listing itself, so the
 * other gateways' Metadata drops it at once, its partitions' leadership
 * moves to them, and its core's coordinator leases are taken over by a core
 * that clients can still reach; it registers again when its core answers.
 * Kafka's controller fences a broker that stops heartbeating alike.
 */

export interface NodeAddress {
  host: string;
  port: number;
}

/** One gateway of the cluster, as registered. */
export interface ClusterNode {
  nodeId: number;
  /** The first listener's advertised address (what `bootstrap.servers` would name). */
  host: string;
  port: number;
  rack: string | null;
  /** The advertised address of each of its listeners, by name (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL). */
  listeners: Record<string, NodeAddress>;
  /**
   * The core this gateway uses: the RPC address it dials, as given to
   * `--core` (e.g. "core-a:7070"), or "in-process:<host>:<port>" when it runs
   * its own core (`serve`). Gateways sharing a core name it alike.
   */
  core: string;
  /**
   * The id its core holds coordinator leases under (src/core/coordination/),
   * so FindCoordinator can send a client to a gateway of the core that
   * coordinates its group; absent when the gateway could not learn it.
   */
  coreNode?: string;
  /** When this incarnation started (epoch ms): a restart registers anew. */
  startedAt: number;
}

/** What handlers read: synchronous, since Metadata asks on every refresh. */
export interface ClusterView {
  readonly self: ClusterNode;
  /** The live gateways, by node id ascending; this one is among them unless it has withdrawn (its core does not answer) and others are live. */
  liveNodes(): readonly ClusterNode[];
}

/** A gateway alone (no Redis): the view is itself. */
export function singleNode(self: ClusterNode): ClusterView {
  const nodes = [self];
  return { self, liveNodes: () => nodes };
}

export interface MembershipOptions {
  /** How long an entry lives without a heartbeat; a killed gateway leaves the view this long after its last one. */
  ttlMs: number;
  /** Prefix of every key, so several clusters can share one Redis. */
  keyPrefix: string;
  log: Logger;
  clock?: () => number;
  /** Whether this gateway can serve now (its core answers); default always. */
  serving?: () => boolean;
}

export const DEFAULT_NODE_TTL_MS = 6_000;
export const DEFAULT_KEY_PREFIX = 'queen';

interface StoredNode extends ClusterNode {
  /** Distinguishes this run from an earlier one at the same address, so leaving deletes only our own entry. */
  instance: string;
}

// Deletes the entry only if it is still this run's (a successor at the same id may have replaced it).
const LEAVE_SCRIPT = `
if redis.call('GET', KEYS[1]) and string.find(redis.call('GET', KEYS[1]), ARGV[1], 1, true) then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], ARGV[2])
end
return 1`;

export class RedisMembership implements ClusterView {
  private nodes: ClusterNode[];
  private lastReadAt: number;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private fallenBack = false;
  private left = false;
  /** Out of the registry because the core does not answer (see the class comment). */
  private withdrawn = false;
  /** When `serving` first said no, in this run of noes. */
  private unservedSince: number | null = null;
  private readonly intervalMs: number;
  private readonly instance = randomUUID();
  private readonly clock: () => number;

  private constructor(
    private readonly connection: RedisConnection,
    readonly self: ClusterNode,
    private readonly options: MembershipOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.nodes = [self];
    this.lastReadAt = this.clock();
    this.intervalMs = Math.max(50, Math.floor(options.ttlMs / 3));
  }

  /**
   * Registers `self` and starts its heartbeat. Refuses (throws a sentence)
   * when another live gateway at a different address holds the node id.
   */
  static async join(connection: RedisConnection, self: ClusterNode, options: MembershipOptions): Promise<RedisMembership> {
    const membership = new RedisMembership(connection, self, options);
    const held = await connection.redis.get(membership.nodeKey(self.nodeId));
    if (held !== null) {
      const other = JSON.parse(held) as StoredNode;
      if (other.host !== self.host || other.port !== self.port) {
        throw new Error(
          `Node id ${self.nodeId} is already held by the live gateway at ${other.host}:${other.port}; give this gateway another --node-id, or leave it out to derive one from the advertised address.`,
        );
      }
    }
    await membership.heartbeat();
    membership.timer = setInterval(() => void membership.tick(), membership.intervalMs);
    membership.timer.unref();
    return membership;
  }

  /**
   * The cluster id every gateway reports: the first to ask stores its
   * proposal, later ones adopt it. An explicit id is used as given (and
   * stored when none is), with a warning when Redis holds another.
   */
  static async clusterId(connection: RedisConnection, keyPrefix: string, proposed: string, explicit: boolean, log: Logger): Promise<string> {
    const key = `${keyPrefix}:cluster-id`;
    await connection.redis.set(key, proposed, 'NX');
    const stored = (await connection.redis.get(key)) ?? proposed;
    if (explicit && stored !== proposed) {
      log.warn({ clusterId: proposed, registered: stored }, 'this gateway reports the cluster id it was given, which differs from the one the other gateways registered; clients may see two clusters');
      return proposed;
    }
    return stored;
  }

  liveNodes(): readonly ClusterNode[] {
    if (this.clock() - this.lastReadAt > this.options.ttlMs) {
      if (!this.fallenBack) {
        this.fallenBack = true;
        this.options.log.warn({ nodeId: this.self.nodeId }, 'the node registry has not been read for a TTL; listing this gateway alone until Redis answers (it serves every partition)');
      }
      return [this.self];
    }
    return this.nodes;
  }

  /** Leaves the cluster at once (graceful stop), so clients move without waiting out the TTL. */
  async leave(): Promise<void> {
    this.left = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    try {
      await this.removeEntry();
    } catch (e) {
      this.options.log.debug({ err: (e as Error).message }, 'could not remove this node from the registry; it expires after its TTL');
    }
  }

  private async removeEntry(): Promise<void> {
    await this.connection.redis.eval(LEAVE_SCRIPT, 2, this.nodeKey(this.self.nodeId), this.setKey(), `"instance":"${this.instance}"`, String(this.self.nodeId));
  }

  private tick(): Promise<void> {
    if (this.ticking || this.left) return this.ticking ?? Promise.resolve();
    this.ticking = this.heartbeat()
      .catch((e: unknown) => {
        // Redis' own error line says it is away; this one is for the curious.
        this.options.log.debug({ err: (e as Error).message }, 'node registry heartbeat failed');
      })
      .finally(() => (this.ticking = null));
    return this.ticking;
  }

  /**
   * Whether to stay registered: `serving` said yes, or has said no for less
   * than a heartbeat interval (a reconnect that quick moves nothing).
   */
  private stillServing(): boolean {
    if (this.options.serving?.() ?? true) {
      this.unservedSince = null;
      return true;
    }
    this.unservedSince ??= this.clock();
    return this.clock() - this.unservedSince < this.intervalMs;
  }

  /** Renews this node's entry (or withdraws it while it cannot serve) and reads everyone's. */
  private async heartbeat(): Promise<void> {
    const { redis } = this.connection;
    const serving = this.stillServing();
    if (serving) {
      const entry: StoredNode = { ...this.self, instance: this.instance };
      await redis.multi().set(this.nodeKey(this.self.nodeId), JSON.stringify(entry), 'PX', this.options.ttlMs).sadd(this.setKey(), String(this.self.nodeId)).exec();
      if (this.withdrawn) {
        this.withdrawn = false;
        this.options.log.info({ nodeId: this.self.nodeId }, 'the core answers again; this gateway is back in the cluster');
      }
    } else if (!this.withdrawn) {
      await this.removeEntry();
      this.withdrawn = true;
      this.options.log.warn({ nodeId: this.self.nodeId }, 'the core does not answer; this gateway has left the cluster until it does, so clients go to the others');
    }
    const ids = await redis.smembers(this.setKey());
    const entries = ids.length === 0 ? [] : await redis.mget(ids.map((id) => this.nodeKey(Number(id))));
    const nodes: ClusterNode[] = [];
    const expired: string[] = [];
    entries.forEach((text, i) => {
      if (text === null) expired.push(ids[i]!);
      else nodes.push(publicNode(JSON.parse(text) as StoredNode));
    });
    if (expired.length > 0) await redis.srem(this.setKey(), ...expired);
    // Withdrawn, it names the others; with none left, itself (an empty broker list helps nobody).
    if (serving || nodes.length === 0) {
      if (!nodes.some((n) => n.nodeId === this.self.nodeId)) nodes.push(this.self);
    }
    nodes.sort((a, b) => a.nodeId - b.nodeId);
    this.logChanges(nodes);
    this.nodes = nodes;
    this.lastReadAt = this.clock();
    if (this.fallenBack) {
      this.fallenBack = false;
      this.options.log.info({ nodes: nodes.length }, 'the node registry answers again; listing every live gateway');
    }
  }

  private logChanges(nodes: ClusterNode[]): void {
    const before = new Set(this.nodes.map((n) => n.nodeId));
    const after = new Set(nodes.map((n) => n.nodeId));
    const joined = nodes.filter((n) => !before.has(n.nodeId)).map((n) => `${n.nodeId}@${n.host}:${n.port}`);
    const gone = this.nodes.filter((n) => !after.has(n.nodeId)).map((n) => `${n.nodeId}@${n.host}:${n.port}`);
    if (joined.length > 0 || gone.length > 0) this.options.log.info({ joined, gone, live: nodes.length }, 'cluster membership changed');
  }

  private nodeKey(nodeId: number): string {
    return `${this.options.keyPrefix}:node:${nodeId}`;
  }

  private setKey(): string {
    return `${this.options.keyPrefix}:nodes`;
  }
}

function publicNode(stored: StoredNode): ClusterNode {
  const { instance: _instance, ...node } = stored;
  return node;
}
