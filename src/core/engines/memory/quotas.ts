import type { AlterClientQuotasRequest, ClientQuotaEntry } from '../../core.js';
import { applyQuotaAlterations } from '../../rules/quotas.js';

/** The memory engine's client quotas, by entity key. */
export class MemoryQuotas {
  private readonly entries = new Map<string, ClientQuotaEntry>();

  alter(req: AlterClientQuotasRequest): void {
    applyQuotaAlterations(this.entries, req.alterations);
  }

  list(): { entries: ClientQuotaEntry[] } {
    return { entries: [...this.entries.values()].map((e) => ({ entity: { ...e.entity }, values: { ...e.values } })) };
  }
}
