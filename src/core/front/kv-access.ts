import type { Core } from '../core.js';
import type { Engine } from '../engine.js';
import { checkAclBindings, checkAclFilters } from '../rules/acls.js';
import { requireArray, requireInteger } from '../rules/arguments.js';
import { checkKvWrite, validateExpectedVersion, validateLifetime, validateOptionalLifetime } from '../rules/kv.js';
import { validateKvKey, validateKvNamespace, validateKvPrefix } from '../rules/names.js';
import { checkQuotaAlterations } from '../rules/quotas.js';
import { checkAlterScramCredentials, checkScramUsers, validateScramMechanism, validateScramUser } from '../rules/scram-credentials.js';
import { kvRef } from './checks.js';

/** Most entries one kvGetPrefix answers. */
const MAX_PREFIX_LIMIT = 10_000;

/** The front's KV and once calls, and access control's (ACLs, client quotas, SCRAM credentials): checked here, stored by the engine. */
export class KvAccessCalls<E extends Engine> {
  constructor(private readonly open: () => E) {}

  // ─── KV and once ───────────────────────────────────────────────────────────

  async kvGet(req: { ns: string; key: string }) {
    const engine = this.open();
    return engine.kv.get(kvRef(req));
  }

  async kvGetMany(req: { ns: string; keys: string[] }) {
    const engine = this.open();
    const ns = validateKvNamespace(req?.ns);
    return engine.kv.getMany({ ns, keys: requireArray<string>(req.keys, 'keys').map((k) => validateKvKey(k)) });
  }

  async kvGetPrefix(req: { ns: string; prefix: string; limit?: number }) {
    const engine = this.open();
    const ns = validateKvNamespace(req?.ns);
    const prefix = validateKvPrefix(req.prefix);
    return engine.kv.getPrefix({ ns, prefix, limit: req.limit === undefined ? 1000 : requireInteger(req.limit, 'limit', 1, MAX_PREFIX_LIMIT) });
  }

  async kvPut(req: Parameters<Core['kvPut']>[0]) {
    const engine = this.open();
    const write = checkKvWrite(req);
    return engine.kv.put({ ...write, expectedVersion: validateExpectedVersion(req.expectedVersion) });
  }

  async kvPutIfAbsent(req: Parameters<Core['kvPutIfAbsent']>[0]) {
    const engine = this.open();
    return engine.kv.putIfAbsent(checkKvWrite(req));
  }

  async kvDelete(req: { ns: string; key: string }) {
    const engine = this.open();
    return engine.kv.delete(kvRef(req));
  }

  async kvIncr(req: Parameters<Core['kvIncr']>[0]) {
    const engine = this.open();
    const { ns, key } = kvRef(req);
    // `by` is checked where it is added (rules/kv.ts decideIncr): a bigint counter takes any integer.
    return engine.kv.incr({ ns, key, by: req.by, lifetime: validateOptionalLifetime(req.lifetime) });
  }

  async once(req: Parameters<Core['once']>[0]) {
    const engine = this.open();
    const { ns, key } = kvRef(req);
    return engine.kv.once({ ns, key, lifetime: validateLifetime(req.lifetime) });
  }

  // ─── ACLs, client quotas, SCRAM credentials ────────────────────────────────

  async createAcls(req: Parameters<Core['createAcls']>[0]) {
    const engine = this.open();
    return engine.access.createAcls({ bindings: checkAclBindings(req?.bindings) });
  }

  async listAcls() {
    return this.open().access.listAcls();
  }

  async deleteAcls(req: Parameters<Core['deleteAcls']>[0]) {
    const engine = this.open();
    return engine.access.deleteAcls({ filters: checkAclFilters(req?.filters) });
  }

  async alterClientQuotas(req: Parameters<Core['alterClientQuotas']>[0]) {
    const engine = this.open();
    return engine.access.alterClientQuotas({ alterations: checkQuotaAlterations(req) });
  }

  async listClientQuotas() {
    return this.open().access.listClientQuotas();
  }

  async describeScramCredentials(req: Parameters<Core['describeScramCredentials']>[0]) {
    const engine = this.open();
    return engine.scramCredentials.describe({ users: checkScramUsers(req?.users) });
  }

  async alterScramCredentials(req: Parameters<Core['alterScramCredentials']>[0]) {
    const engine = this.open();
    return engine.scramCredentials.alter(checkAlterScramCredentials(req));
  }

  async scramCredential(req: Parameters<Core['scramCredential']>[0]) {
    const engine = this.open();
    return engine.scramCredentials.get({ user: validateScramUser(req?.user), mechanism: validateScramMechanism(req.mechanism) });
  }
}
