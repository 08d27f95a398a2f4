import type { AclBinding, AclBindingFilter } from '../../core.js';
import { aclBindingKey, filterMatches, sortAclBindings } from '../../rules/acls.js';

/** The memory engine's ACL bindings, by key. */
export class MemoryAcls {
  private readonly bindings = new Map<string, AclBinding>();

  create(req: { bindings: AclBinding[] }): void {
    for (const binding of req.bindings) this.bindings.set(aclBindingKey(binding), binding);
  }

  list(): { bindings: AclBinding[] } {
    return { bindings: sortAclBindings([...this.bindings.values()].map((b) => ({ ...b }))) };
  }

  delete(req: { filters: AclBindingFilter[] }): { results: { deleted: AclBinding[] }[] } {
    const filters = req.filters;
    // Every filter sees the bindings as they were before the call, as Kafka's DeleteAcls does.
    const before = [...this.bindings.entries()];
    const results = filters.map((filter) => ({ deleted: before.filter(([, b]) => filterMatches(filter, b)).map(([, b]) => ({ ...b })) }));
    for (const { deleted } of results) for (const b of deleted) this.bindings.delete(aclBindingKey(b));
    return { results };
  }
}
