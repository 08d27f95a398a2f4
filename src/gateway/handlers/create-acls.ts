// CreateAcls: adds ACL bindings, stored in the core, so every gateway in
// front of it enforces them (each within its refresh interval; this one at
// once).
//
// Choices, as Kafka's broker:
// - Needs ALTER on the cluster (else every creation answers
//   CLUSTER_AUTHORIZATION_FAILED); with the authorizer off, SECURITY_DISABLED.
// - Each creation is checked on its own: a bad one (an unknown code, ANY or
//   MATCH, a principal not of the form TYPE:NAME, a CLUSTER resource not
//   named kafka-cluster) answers INVALID_REQUEST with the reason, the others
//   are stored. Creating a binding that exists already succeeds and changes
//   nothing.
//
// Versions: v0 has no pattern type (LITERAL); v2+ flexible.
import { CreateAcls } from '../../../protocol/messages/index.js';
import type { AclBinding } from '../../core/index.js';
import { aclApiRefusal, bindingFromWire, WireAclError, type WireBinding } from '../acl-bindings.js';
import type { ApiHandler } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

export const createAcls: ApiHandler<typeof CreateAcls> = {
  api: CreateAcls,
  versions: '0-3',
  async handle(request, ctx) {
    const creations = request.creations.map((c) => ({ ...c, patternType: c.resourcePatternType }));
    const refusal = aclApiRefusal(ctx, 'ALTER');
    if (refusal) return { throttleTimeMs: 0, results: creations.map(() => refusal) };

    const results: { errorCode: number; errorMessage: string | null }[] = [];
    const bindings: AclBinding[] = [];
    for (const creation of creations) {
      try {
        bindings.push(bindingFromWire(creation));
        results.push({ errorCode: NONE, errorMessage: null });
      } catch (e) {
        if (!(e instanceof WireAclError)) throw e;
        results.push({ errorCode: e.errorCode, errorMessage: e.message });
      }
    }
    if (bindings.length > 0) {
      try {
        await ctx.core.createAcls({ bindings });
        ctx.log.info({ principal: ctx.access.principal, bindings }, 'ACLs created');
        await ctx.authorizer.refresh();
      } catch (e) {
        const failed = kafkaErrorOf(e);
        return { throttleTimeMs: 0, results: results.map((r) => (r.errorCode === NONE ? failed : r)) };
      }
    }
    return { throttleTimeMs: 0, results };
  },
};
