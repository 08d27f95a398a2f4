// DescribeUserScramCredentials: which SCRAM mechanisms (and iteration
// counts) each user has a credential for; never the salt or keys.
//
// As Kafka: no names (null or empty) lists every user with a credential; a
// named user without one answers RESOURCE_NOT_FOUND for that user; a name
// given twice answers DUPLICATE_RESOURCE for it. ACLs: DESCRIBE on the
// cluster, else CLUSTER_AUTHORIZATION_FAILED and no names at all.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeUserScramCredentials } from '../../../protocol/messages/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { scramTypeOf } from '../sasl/scram-mechanisms.js';

export const describeUserScramCredentials: ApiHandler<typeof DescribeUserScramCredentials> = {
  api: DescribeUserScramCredentials,
  versions: '0',
  async handle(request, ctx) {
    if (!ctx.access.allows('DESCRIBE', 'CLUSTER', CLUSTER_NAME)) {
      return { throttleTimeMs: 0, errorCode: DENIED_CODE.CLUSTER, errorMessage: 'Not authorized to describe SCRAM credentials: it needs DESCRIBE on the cluster.', results: [] };
    }
    const asked = request.users?.map((u) => u.name) ?? [];
    const counts = new Map<string, number>();
    for (const name of asked) counts.set(name, (counts.get(name) ?? 0) + 1);
    const lookUp = asked.length === 0 ? null : [...counts.keys()].filter((n) => n !== '' && counts.get(n) === 1);
    const found = lookUp !== null && lookUp.length === 0 ? [] : (await ctx.core.describeScramCredentials({ users: lookUp })).users;
    const byUser = new Map(found.map((u) => [u.user, u]));
    const names = lookUp === null ? found.map((u) => u.user) : [...counts.keys()];
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      errorMessage: null,
      results: names.map((user) => {
        const refuse = (errorCode: number, errorMessage: string) => ({ user, errorCode, errorMessage, credentialInfos: [] });
        if ((counts.get(user) ?? 1) > 1) return refuse(ErrorCode.DUPLICATE_RESOURCE, 'Cannot describe SCRAM credentials for the same user twice in a single request');
        const credentials = byUser.get(user)?.credentials ?? [];
        if (credentials.length === 0) return refuse(ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to describe a user credential that does not exist');
        return {
          user,
          errorCode: NONE,
          errorMessage: null,
          credentialInfos: credentials.map((c) => ({ mechanism: scramTypeOf(c.mechanism), iterations: c.iterations })),
        };
      }),
    };
  },
};
