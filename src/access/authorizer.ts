import type { Logger } from 'pino';
import { type AclBinding, type AclOperation, type AclResourceType, type Core, patternCovers, WILDCARD_HOST, WILDCARD_PRINCIPAL, WILDCARD_RESOURCE } from '../core/index.js';
import { CLUSTER_NAME, operationBits, RESOURCE_OPERATIONS } from './acl-operations.js';
import { CoreRefresh } from './core-refresh.js';

/**
 * The authorizer the Kafka listeners and the HTTP API share (so one ACL
 * judges a request whichever door it came by): Kafka's StandardAuthorizer
 * rules over the ACL bindings stored in the core, cached here and read again every `refreshMs`
 * (and at once after this gateway changes them), so gateways in front of one
 * store agree within that time.
 *
 * The rules, as Kafka's:
 * - a super user may do everything;
 * - a DENY binding that matches (principal or User:*, host or *, the
 *   operation or ALL, a pattern covering the resource) refuses, whatever
 *   allows it: deny wins;
 * - otherwise an ALLOW binding that matches allows; ALLOW of READ, WRITE,
 *   DELETE or ALTER implies DESCRIBE, and ALTER_CONFIGS implies
 *   DESCRIBE_CONFIGS;
 * - a resource no binding covers at all (for any principal) is allowed only
 *   when allowEveryoneIfNoAclFound is set (default false).
 *
 * Off (the default) every request is allowed, as before ACLs existed, and the
 * ACL APIs answer SECURITY_DISABLED as Kafka's broker without an authorizer.
 * On but not yet loaded (the core did not answer), only super users pass:
 * failing closed, never open.
 */

export interface AuthorizationSettings {
  enabled: boolean;
  /** Principals allowed everything, e.g. "User:admin". */
  superUsers: readonly string[];
  /** Kafka's allow.everyone.if.no.acl.found. */
  allowEveryoneIfNoAclFound: boolean;
  /** How often bindings are read again from the core. */
  refreshMs: number;
}

export const AUTHORIZATION_OFF: Readonly<AuthorizationSettings> = Object.freeze({
  enabled: false,
  superUsers: [],
  allowEveryoneIfNoAclFound: false,
  refreshMs: 5_000,
});

/** What one request may do: the one-line check every handler makes. */
export interface Access {
  readonly principal: string;
  /** May this principal do `operation` on the named resource? */
  allows(operation: AclOperation, type: AclResourceType, name: string): boolean;
  /** May it do `operation` on some resource of the type (Kafka's authorizeByResourceType)? */
  allowsAny(operation: AclOperation, type: AclResourceType): boolean;
  /** The authorized-operations bit field of the named resource. */
  operations(type: AclResourceType, name: string): number;
}

/** What a principal may do on the cluster; nothing unless it may DESCRIBE it (Kafka's rule for Metadata and DescribeCluster). */
export function clusterOperations(access: Access): number {
  return access.allows('DESCRIBE', 'CLUSTER', CLUSTER_NAME) ? access.operations('CLUSTER', CLUSTER_NAME) : 0;
}

/** DESCRIBE is implied by these, DESCRIBE_CONFIGS by ALTER_CONFIGS (Kafka's implied operations). */
const IMPLYING: Partial<Record<AclOperation, readonly AclOperation[]>> = {
  DESCRIBE: ['READ', 'WRITE', 'DELETE', 'ALTER'],
  DESCRIBE_CONFIGS: ['ALTER_CONFIGS'],
};

/** IPv4 clients on a dual-stack socket show as ::ffff:a.b.c.d; ACL hosts name them a.b.c.d. */
function plainHost(host: string): string {
  return host.startsWith('::ffff:') ? host.slice(7) : host;
}

export class Authorizer {
  private byType: Map<AclResourceType, AclBinding[]> | null = null;
  private readonly superUsers: ReadonlySet<string>;
  private readonly refresher: CoreRefresh;

  constructor(
    private readonly core: Pick<Core, 'listAcls'>,
    readonly settings: AuthorizationSettings,
    private readonly log: Logger,
  ) {
    this.superUsers = new Set(settings.superUsers);
    this.refresher = new CoreRefresh(() => this.load(), settings.refreshMs, log, () =>
      this.byType ? 'could not refresh ACLs from the core; the last ones loaded stay in force' : 'could not load ACLs from the core; only super users are allowed until they load',
    );
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** Loads the bindings (a failure is logged and retried on the timer) and starts refreshing. */
  async start(): Promise<void> {
    if (this.enabled) await this.refresher.start();
  }

  stop(): void {
    this.refresher.stop();
  }

  /** Reads the bindings from the core now; on failure the last ones stay in force. */
  async refresh(): Promise<void> {
    if (this.enabled) await this.refresher.refresh();
  }

  private async load(): Promise<void> {
    const { bindings } = await this.core.listAcls();
    const byType = new Map<AclResourceType, AclBinding[]>();
    for (const b of bindings) {
      const list = byType.get(b.resourceType);
      if (list) list.push(b);
      else byType.set(b.resourceType, [b]);
    }
    this.byType = byType;
  }

  accessFor(principal: string, host: string): Access {
    host = plainHost(host);
    if (!this.enabled) {
      return {
        principal,
        allows: () => true,
        allowsAny: () => true,
        operations: (type) => operationBits(RESOURCE_OPERATIONS[type]),
      };
    }
    return {
      principal,
      allows: (operation, type, name) => {
        const allowed = this.authorize(principal, host, operation, type, name);
        if (!allowed) this.log.debug({ principal, host, operation, resourceType: type, resource: name }, 'authorization denied');
        return allowed;
      },
      allowsAny: (operation, type) => this.authorizeAny(principal, host, operation, type),
      operations: (type, name) => operationBits(RESOURCE_OPERATIONS[type].filter((op) => this.authorize(principal, host, op, type, name))),
    };
  }

  authorize(principal: string, host: string, operation: AclOperation, type: AclResourceType, name: string): boolean {
    if (this.superUsers.has(principal)) return true;
    if (!this.byType) return false;
    const covering = (this.byType.get(type) ?? []).filter((b) => patternCovers(b, name));
    if (covering.length === 0) return this.settings.allowEveryoneIfNoAclFound;
    const applies = covering.filter((b) => (b.principal === principal || b.principal === WILDCARD_PRINCIPAL) && (b.host === host || b.host === WILDCARD_HOST));
    if (applies.some((b) => b.permission === 'DENY' && (b.operation === 'ALL' || b.operation === operation))) return false;
    const granting = new Set<AclOperation>(['ALL', operation, ...(IMPLYING[operation] ?? [])]);
    return applies.some((b) => b.permission === 'ALLOW' && granting.has(b.operation));
  }

  /**
   * Kafka's authorizeByResourceType: allowed when some ALLOW binding of the
   * type lets the principal do the operation on a resource no DENY binding
   * covers as a whole (the literal name, or a prefix of an allowed prefix),
   * and no DENY covers every resource of the type.
   */
  authorizeAny(principal: string, host: string, operation: AclOperation, type: AclResourceType): boolean {
    if (this.superUsers.has(principal)) return true;
    if (!this.byType) return false;
    const all = this.byType.get(type) ?? [];
    if (all.length === 0) return this.settings.allowEveryoneIfNoAclFound;
    const applies = all.filter(
      (b) =>
        (b.principal === principal || b.principal === WILDCARD_PRINCIPAL) &&
        (b.host === host || b.host === WILDCARD_HOST) &&
        (b.operation === 'ALL' || b.operation === operation),
    );
    const denies = applies.filter((b) => b.permission === 'DENY');
    const deniedWhole = (b: AclBinding) =>
      denies.some((d) => (d.patternType === 'PREFIXED' ? b.resourceName.startsWith(d.resourceName) : d.resourceName === WILDCARD_RESOURCE || (b.patternType === 'LITERAL' && d.resourceName === b.resourceName)));
    return applies.some((b) => b.permission === 'ALLOW' && !deniedWhole(b));
  }
}
