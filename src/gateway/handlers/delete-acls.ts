// DeleteAcls: deletes the ACL bindings each filter matches, in one step in
// the core, and answers per filter the bindings it deleted.
//
// Choices, as Kafka's broker: needs ALTER on the cluster (else every filter
// answers CLUSTER_AUTHORIZATION_FAILED); with the authorizer off,
// SECURITY_DISABLED; a filter with a code Kafka does not define answers
// INVALID_REQUEST and the others still apply. Every filter sees the bindings
// as they were before the request.
//
// Versions: v0 has no pattern type filter (LITERAL); v2+ flexible.
import { DeleteAcls } from '../../../protocol/messages/index.js';
import type { AclBinding, AclBindingFilter } from '../../core/index.js';
import { aclApiRefusal, bindingToWire, filterFromWire, WireAclError, type WireBinding } from '../acl-bindings.js';
import type { ApiHandler } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

export const deleteAcls: ApiHandler<typeof DeleteAcls> = {
  api: DeleteAcls,
  versions: '0-3',
  async handle(request, ctx) {
    const asked = request.filters;
    const refusal = aclApiRefusal(ctx, 'ALTER');
    if (refusal) return { throttleTimeMs: 0, filterResults: asked.map(() => ({ ...refusal, matchingAcls: [] })) };

    const parsed: (AclBindingFilter | WireAclError)[] = asked.map((f) => {
      const wire: WireBinding = {
        resourceType: f.resourceTypeFilter, resourceName: f.resourceNameFilter, patternType: f.patternTypeFilter,
        principal: f.principalFilter, host: f.hostFilter, operation: f.operation, permissionType: f.permissionType,
      };
      try {
        return filterFromWire(wire);
      } catch (e) {
        if (e instanceof WireAclError) return e;
        throw e;
      }
    });
    const filters = parsed.filter((p): p is AclBindingFilter => !(p instanceof WireAclError));
    let deleted: { deleted: AclBinding[] }[];
    try {
      deleted = filters.length > 0 ? (await ctx.core.deleteAcls({ filters })).results : [];
    } catch (e) {
      const failed = kafkaErrorOf(e);
      return { throttleTimeMs: 0, filterResults: asked.map(() => ({ ...failed, matchingAcls: [] })) };
    }
    if (deleted.some((r) => r.deleted.length > 0)) {
      ctx.log.info({ principal: ctx.access.principal, deleted: deleted.flatMap((r) => r.deleted) }, 'ACLs deleted');
      await ctx.authorizer.refresh();
    }
    let next = 0;
    const filterResults = parsed.map((p) => {
      if (p instanceof WireAclError) return { errorCode: p.errorCode, errorMessage: p.message, matchingAcls: [] };
      return {
        errorCode: NONE,
        errorMessage: null,
        matchingAcls: deleted[next++]!.deleted.map((b) => {
          const wire = bindingToWire(b);
          return { errorCode: NONE, errorMessage: null, ...wire, resourceName: b.resourceName };
        }),
      };
    });
    return { throttleTimeMs: 0, filterResults };
  },
};
