import { QUOTA_KEYS, type AlterClientQuotasRequest, type ClientQuotaEntry, type QuotaEntity, type QuotaKey } from '../core.js';
import { CoreError } from '../errors.js';
import { requireArray } from './arguments.js';

/**
 * Client quotas as the core stores them: an entity (user, client id, both,
 * or their defaults) and its values. Both engines check alterations here and
 * key entities by `quotaEntityKey`.
 */

function invalid(message: string): never {
  throw new CoreError('invalid_argument', message);
}

function entityComponent(value: unknown, field: string): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string' || value.length === 0) invalid(`${field} must be a non-empty string, or null for the default; got ${JSON.stringify(value)}.`);
  return value;
}

export function checkQuotaEntity(value: unknown, field: string): QuotaEntity {
  if (typeof value !== 'object' || value === null) invalid(`${field} must be an object; got ${JSON.stringify(value)}.`);
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (key !== 'user' && key !== 'clientId') invalid(`${field} has "${key}"; a quota entity has only user and clientId.`);
  }
  const entity: QuotaEntity = {};
  const user = entityComponent(raw.user, `${field}.user`);
  const clientId = entityComponent(raw.clientId, `${field}.clientId`);
  if ('user' in raw) entity.user = user ?? null;
  if ('clientId' in raw) entity.clientId = clientId ?? null;
  if (!('user' in entity) && !('clientId' in entity)) invalid(`${field} names neither a user nor a client id.`);
  return entity;
}

function quotaKey(value: unknown, field: string): QuotaKey {
  if (typeof value !== 'string' || !(QUOTA_KEYS as readonly string[]).includes(value)) {
    invalid(`${field} must be one of ${QUOTA_KEYS.join(', ')}; got ${JSON.stringify(value)}.`);
  }
  return value as QuotaKey;
}

export function checkQuotaAlterations(req: AlterClientQuotasRequest): AlterClientQuotasRequest['alterations'] {
  return requireArray<unknown>(req?.alterations, 'alterations').map((a, i) => {
    const field = `alterations[${i}]`;
    if (typeof a !== 'object' || a === null) invalid(`${field} must be an object.`);
    const raw = a as Record<string, unknown>;
    const set: Partial<Record<QuotaKey, number>> = {};
    for (const [k, v] of Object.entries((raw.set ?? {}) as Record<string, unknown>)) {
      const key = quotaKey(k, `${field}.set key`);
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) invalid(`${field}.set.${key} must be a number above 0; got ${JSON.stringify(v)}.`);
      set[key] = v;
    }
    const remove = requireArray<unknown>(raw.remove ?? [], `${field}.remove`).map((k, j) => quotaKey(k, `${field}.remove[${j}]`));
    return { entity: checkQuotaEntity(raw.entity, `${field}.entity`), set, remove };
  });
}

/** One string per entity: equal entities, equal keys ("<default>" cannot clash with a name: names are JSON strings). */
export function quotaEntityKey(entity: QuotaEntity): string {
  return JSON.stringify([entity.user === undefined ? 0 : entity.user, entity.clientId === undefined ? 0 : entity.clientId]);
}

/** Applies checked alterations to entries held by entity key. */
export function applyQuotaAlterations(entries: Map<string, ClientQuotaEntry>, alterations: AlterClientQuotasRequest['alterations']): void {
  for (const { entity, set, remove } of alterations) {
    const key = quotaEntityKey(entity);
    const values = { ...(entries.get(key)?.values ?? {}) };
    for (const k of remove) delete values[k];
    Object.assign(values, set);
    if (Object.keys(values).length === 0) entries.delete(key);
    else entries.set(key, { entity, values });
  }
}
