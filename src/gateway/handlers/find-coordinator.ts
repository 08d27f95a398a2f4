// FindCoordinator: names the broker that coordinates a group or a
// transactional id. Every gateway can serve every group (the coordinator
// lives in the core), so the answer is always this gateway.
//
// Versions: v0-v3 ask for one key; v4+ batch several (CoordinatorKeys) and
// answer one entry per key. KeyType 0 is a group, 1 a transactional id.
//
// ACLs: DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) or the
// transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
import { FindCoordinator } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const findCoordinator: ApiHandler = {
  api: FindCoordinator,
  versions: '0-6',
  async handle(request, ctx) {
    const { nodeId, host, port } = ctx.settings.advertised;
    // Key type 0 names a group, 1 a transactional id; finding either needs DESCRIBE on it.
    const resource = request.keyType === 1 ? ('TRANSACTIONAL_ID' as const) : ('GROUP' as const);
    const found = (key: string) =>
      ctx.access.allows('DESCRIBE', resource, key)
        ? { nodeId, host, port, errorCode: NONE, errorMessage: null }
        : { nodeId: -1, host: '', port: -1, errorCode: DENIED_CODE[resource], errorMessage: `Not authorized to find the coordinator of ${resource === 'GROUP' ? 'group' : 'transactional id'} '${key}'.` };
    if (ctx.header.apiVersion < 4) return { throttleTimeMs: 0, ...found(request.key) };
    return {
      throttleTimeMs: 0,
      coordinators: (request.coordinatorKeys as string[]).map((key) => ({ key, ...found(key) })),
    };
  },
};
