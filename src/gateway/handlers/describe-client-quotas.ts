// DescribeClientQuotas: lists the client quota entities a filter matches and
// their values, read from the core.
//
// Choices, as Kafka's broker:
// - Needs DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
// - Each filter component names an entity type (user, client-id) and matches
//   an exact name (0), the default (1) or any name given (2); Strict leaves
//   out entities that have types the filter does not name. A type other than
//   user and client-id, or a type named twice, answers INVALID_REQUEST.
//
// Versions: v1 flexible.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeClientQuotas } from '../../../protocol/messages/index.js';
import type { QuotaEntity } from '../../core/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { entityComponentOf, entityToWire } from '../quota-entities.js';

const EXACT = 0;
const DEFAULT = 1;
const SPECIFIED = 2;

export const describeClientQuotas: ApiHandler<typeof DescribeClientQuotas> = {
  api: DescribeClientQuotas,
  versions: '0-1',
  async handle(request, ctx) {
    const refused = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, errorCode, errorMessage, entries: null });
    if (!ctx.access.allows('DESCRIBE_CONFIGS', 'CLUSTER', CLUSTER_NAME)) return refused(DENIED_CODE.CLUSTER, 'Not authorized: describing client quotas needs DESCRIBE_CONFIGS on the cluster.');
    const components = request.components;
    const keys: (keyof QuotaEntity)[] = [];
    for (const c of components) {
      const key = entityComponentOf(c.entityType);
      if (key === null) return refused(ErrorCode.INVALID_REQUEST, `Entity type '${c.entityType}' has no quotas here; filter on user or client-id.`);
      if (keys.includes(key)) return refused(ErrorCode.INVALID_REQUEST, `Entity type '${c.entityType}' appears twice in the filter.`);
      if (c.matchType !== EXACT && c.matchType !== DEFAULT && c.matchType !== SPECIFIED) return refused(ErrorCode.INVALID_REQUEST, `Match type ${c.matchType} is not one Kafka defines (0 exact, 1 default, 2 any).`);
      keys.push(key);
    }
    const matches = (entity: QuotaEntity) =>
      components.every((c, i) => {
        const value = entity[keys[i]!];
        if (value === undefined) return false;
        if (c.matchType === EXACT) return value === c.match;
        if (c.matchType === DEFAULT) return value === null;
        return value !== null;
      }) && (!request.strict || (Object.keys(entity) as (keyof QuotaEntity)[]).every((k) => keys.includes(k)));
    const { entries } = await ctx.core.listClientQuotas();
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      errorMessage: null,
      entries: entries
        .filter((e) => matches(e.entity))
        .map((e) => ({ entity: entityToWire(e.entity), values: Object.entries(e.values).map(([key, value]) => ({ key, value })) })),
    };
  },
};
