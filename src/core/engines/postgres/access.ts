import type { AclBinding, AclBindingFilter, AlterClientQuotasRequest, ClientQuotaEntry, QuotaEntity } from '../../core.js';
import { aclBindingKey, filterMatches, sortAclBindings } from '../../rules/acls.js';
import { applyQuotaAlterations, quotaEntityKey } from '../../rules/quotas.js';
import type { Database } from './database.js';

/**
 * The PostgreSQL engine's ACL bindings and client quotas (sql/access.sql,
 * migration 006). Small tables read whole: gateways cache them and refresh.
 */

interface AclRow {
  resource_type: string;
  pattern_type: string;
  resource_name: string;
  principal: string;
  host: string;
  operation: string;
  permission: string;
}

function toBinding(r: AclRow): AclBinding {
  return {
    resourceType: r.resource_type,
    patternType: r.pattern_type,
    resourceName: r.resource_name,
    principal: r.principal,
    host: r.host,
    operation: r.operation,
    permission: r.permission,
  } as AclBinding;
}

/** The seven column arrays unnest() takes, in the tables' column order. */
function columns(bindings: AclBinding[]): string[][] {
  return [
    bindings.map((b) => b.resourceType),
    bindings.map((b) => b.patternType),
    bindings.map((b) => b.resourceName),
    bindings.map((b) => b.principal),
    bindings.map((b) => b.host),
    bindings.map((b) => b.operation),
    bindings.map((b) => b.permission),
  ];
}

export class PostgresAccess {
  constructor(private readonly db: Database) {}

  async createAcls(req: { bindings: AclBinding[] }): Promise<void> {
    const bindings = req.bindings;
    if (bindings.length > 0) await this.db.statements.run('acl-insert', columns(bindings));
  }

  async listAcls(): Promise<{ bindings: AclBinding[] }> {
    const rows = await this.db.statements.run<AclRow>('acl-list');
    return { bindings: sortAclBindings(rows.map(toBinding)) };
  }

  async deleteAcls(req: { filters: AclBindingFilter[] }): Promise<{ results: { deleted: AclBinding[] }[] }> {
    const filters = req.filters;
    return this.db.transaction(async (tx) => {
      await tx.run('acl-lock');
      const before = (await tx.run<AclRow>('acl-list')).map(toBinding);
      const results = filters.map((filter) => ({ deleted: before.filter((b) => filterMatches(filter, b)) }));
      const doomed = new Map(results.flatMap(({ deleted }) => deleted.map((b) => [aclBindingKey(b), b] as const)));
      if (doomed.size > 0) await tx.run('acl-delete', columns([...doomed.values()]));
      return { results };
    });
  }

  async alterClientQuotas(req: AlterClientQuotasRequest): Promise<void> {
    const alterations = req.alterations;
    await this.db.transaction(async (tx) => {
      await tx.run('quota-lock');
      const entries = new Map<string, ClientQuotaEntry>();
      for (const row of await tx.run<{ entity_key: string; entity: QuotaEntity; quota_values: ClientQuotaEntry['values'] }>('quota-list')) {
        entries.set(row.entity_key, { entity: row.entity, values: row.quota_values });
      }
      applyQuotaAlterations(entries, alterations);
      for (const key of new Set(alterations.map((a) => quotaEntityKey(a.entity)))) {
        const entry = entries.get(key);
        if (entry) await tx.run('quota-upsert', [key, JSON.stringify(entry.entity), JSON.stringify(entry.values)]);
        else await tx.run('quota-delete', [key]);
      }
    });
  }

  async listClientQuotas(): Promise<{ entries: ClientQuotaEntry[] }> {
    const rows = await this.db.statements.run<{ entity: QuotaEntity; quota_values: ClientQuotaEntry['values'] }>('quota-list');
    return { entries: rows.map((r) => ({ entity: r.entity, values: r.quota_values })) };
  }
}
