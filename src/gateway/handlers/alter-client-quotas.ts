// AlterClientQuotas: sets and removes client quota values (produce and
// fetch bytes/s, request percentage), stored in the core; every gateway
// applies them within its refresh interval, this one at once.
//
// Choices, as Kafka's broker:
// - Needs ALTER_CONFIGS on the cluster, else every entry answers
//   CLUSTER_AUTHORIZATION_FAILED.
// - Each entry is checked on its own: an entity type other than user and
//   client-id, an unknown key, or a value not above 0 answers
//   INVALID_REQUEST with the reason; the good entries apply together.
// - ValidateOnly checks and changes nothing.
//
// Versions: v1 flexible.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { AlterClientQuotas } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { type AlterClientQuotasRequest, checkQuotaAlterations, isCoreError } from '../../core/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { entityFromWire } from '../quota-entities.js';

type WireEntry = RequestOf<typeof AlterClientQuotas>['entries'][number];

type Alteration = AlterClientQuotasRequest['alterations'][number];

export const alterClientQuotas: ApiHandler<typeof AlterClientQuotas> = {
  api: AlterClientQuotas,
  versions: '0-1',
  async handle(request, ctx) {
    const asked = request.entries;
    const answer = (e: WireEntry, errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, entity: e.entity });
    if (!ctx.access.allows('ALTER_CONFIGS', 'CLUSTER', CLUSTER_NAME)) {
      return { throttleTimeMs: 0, entries: asked.map((e) => answer(e, DENIED_CODE.CLUSTER, 'Not authorized: altering client quotas needs ALTER_CONFIGS on the cluster.')) };
    }
    const checked: (Alteration | string)[] = asked.map((e) => {
      const entity = entityFromWire(e.entity);
      if (typeof entity === 'string') return entity;
      const alteration = {
        entity,
        set: Object.fromEntries(e.ops.filter((op) => !op.remove).map((op) => [op.key, op.value])),
        remove: e.ops.filter((op) => op.remove).map((op) => op.key),
      } as Alteration;
      try {
        return checkQuotaAlterations({ alterations: [alteration] })[0]!;
      } catch (err) {
        if (isCoreError(err)) return err.message.replace(/^alterations\[0\]\./, '');
        throw err;
      }
    });
    const good = checked.filter((c): c is Alteration => typeof c !== 'string');
    if (good.length > 0 && !request.validateOnly) {
      try {
        await ctx.core.alterClientQuotas({ alterations: good });
        ctx.log.info({ principal: ctx.access.principal, alterations: good }, 'client quotas altered');
        await ctx.quotas.refresh();
      } catch (err) {
        const { errorCode, errorMessage } = kafkaErrorOf(err);
        return { throttleTimeMs: 0, entries: asked.map((e, i) => answer(e, typeof checked[i] === 'string' ? ErrorCode.INVALID_REQUEST : errorCode, typeof checked[i] === 'string' ? (checked[i] as string) : errorMessage)) };
      }
    }
    return { throttleTimeMs: 0, entries: asked.map((e, i) => (typeof checked[i] === 'string' ? answer(e, ErrorCode.INVALID_REQUEST, checked[i] as string) : answer(e, NONE, null))) };
  },
};
