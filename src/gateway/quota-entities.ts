import type { QuotaEntity } from '../core/index.js';

/** Quota entities between Kafka's wire form ([{ entityType, entityName }], null name = default) and the core's. */

const TYPES: Readonly<Record<string, keyof QuotaEntity>> = { user: 'user', 'client-id': 'clientId' };

/** The core's component for a Kafka entity type, or null when it has no quotas here. */
export function entityComponentOf(entityType: string): keyof QuotaEntity | null {
  return TYPES[entityType] ?? null;
}

export function entityToWire(entity: QuotaEntity): { entityType: string; entityName: string | null }[] {
  const wire: { entityType: string; entityName: string | null }[] = [];
  if (entity.user !== undefined) wire.push({ entityType: 'user', entityName: entity.user });
  if (entity.clientId !== undefined) wire.push({ entityType: 'client-id', entityName: entity.clientId });
  return wire;
}

/** The core's entity, or a sentence saying why the wire's cannot be one. */
export function entityFromWire(wire: { entityType: string; entityName: string | null }[]): QuotaEntity | string {
  const entity: QuotaEntity = {};
  for (const { entityType, entityName } of wire) {
    const key = entityComponentOf(entityType);
    if (key === null) return `Entity type '${entityType}' has no quotas here; use user and/or client-id.`;
    if (key in entity) return `Entity type '${entityType}' appears twice in one entity.`;
    entity[key] = entityName;
  }
  if (Object.keys(entity).length === 0) return 'The entity names no user and no client id.';
  return entity;
}
