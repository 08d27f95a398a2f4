// FindCoordinator: names the broker that coordinates a group or a
// transactional id. Every gateway can serve every group (the coordinator
// lives in the core), so the answer is always this gateway.
//
// Versions: v0-v3 ask for one key; v4+ batch several (CoordinatorKeys) and
// answer one entry per key. KeyType 0 is a group, 1 a transactional id.
import { FindCoordinator } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const findCoordinator: ApiHandler = {
  api: FindCoordinator,
  versions: '0-6',
  async handle(request, ctx) {
    const { nodeId, host, port } = ctx.settings.advertised;
    if (ctx.header.apiVersion < 4) {
      return { throttleTimeMs: 0, errorCode: NONE, errorMessage: null, nodeId, host, port };
    }
    return {
      throttleTimeMs: 0,
      coordinators: (request.coordinatorKeys as string[]).map((key) => ({ key, nodeId, host, port, errorCode: NONE, errorMessage: null })),
    };
  },
};
