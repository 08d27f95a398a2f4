// DescribeAcls: lists the ACL bindings a filter matches, grouped by resource
// pattern, read from the core (not this gateway's cache, so the answer is
// current).
//
// Choices, as Kafka's broker: needs DESCRIBE on the cluster (else
// CLUSTER_AUTHORIZATION_FAILED); with the authorizer off, SECURITY_DISABLED;
// a filter with a code Kafka does not define answers INVALID_REQUEST.
//
// Versions: v0 has no pattern type filter (LITERAL); v2+ flexible.
import { DescribeAcls } from '../../../protocol/messages/index.js';
import { filterMatches } from '../../core/index.js';
import { aclApiRefusal, bindingToWire, filterFromWire, WireAclError } from '../acl-bindings.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const describeAcls: ApiHandler<typeof DescribeAcls> = {
  api: DescribeAcls,
  versions: '0-3',
  async handle(request, ctx) {
    const refused = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });
    const refusal = aclApiRefusal(ctx, 'DESCRIBE');
    if (refusal) return refused(refusal.errorCode, refusal.errorMessage);
    let filter;
    try {
      filter = filterFromWire({
        resourceType: request.resourceTypeFilter,
        resourceName: request.resourceNameFilter,
        patternType: request.patternTypeFilter,
        principal: request.principalFilter,
        host: request.hostFilter,
        operation: request.operation,
        permissionType: request.permissionType,
      });
    } catch (e) {
      if (!(e instanceof WireAclError)) throw e;
      return refused(e.errorCode, e.message);
    }
    const { bindings } = await ctx.core.listAcls();
    const resources = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: object[] }>();
    for (const b of bindings.filter((b) => filterMatches(filter, b))) {
      const wire = bindingToWire(b);
      const key = `${wire.resourceType}\0${wire.patternType}\0${b.resourceName}`;
      let resource = resources.get(key);
      if (!resource) resources.set(key, (resource = { resourceType: wire.resourceType, resourceName: b.resourceName, patternType: wire.patternType, acls: [] }));
      resource.acls.push({ principal: b.principal, host: b.host, operation: wire.operation, permissionType: wire.permissionType });
    }
    return { throttleTimeMs: 0, errorCode: NONE, errorMessage: null, resources: [...resources.values()] };
  },
};
