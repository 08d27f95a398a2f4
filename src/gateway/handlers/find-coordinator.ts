// FindCoordinator: names the broker that coordinates a group or a
// transactional id. Every gateway can serve every group (the coordinator
// lives in the core), so the answer is always this gateway.
//
// Choices:
// - A KeyType Kafka does not define (0 group, 1 transactional id, 2 share
//   group) answers INVALID_REQUEST with no coordinator, for every key, as
//   Kafka's broker does.
//
// Versions: v0-v3 ask for one key; v4+ batch several (CoordinatorKeys) and
// answer one entry per key. KeyType from v1; v0 asks for a group.
//
// ACLs: DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) or the
// transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { FindCoordinator } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

/** Kafka's CoordinatorType ids: group, transaction, share. */
const KEY_TYPES: ReadonlySet<number> = new Set([0, 1, 2]);

export const findCoordinator: ApiHandler<typeof FindCoordinator> = {
  api: FindCoordinator,
  versions: '0-6',
  async handle(request, ctx) {
    const { nodeId, host, port } = ctx.settings.advertised;
    const keyType: number = request.keyType;
    const resource = keyType === 1 ? ('TRANSACTIONAL_ID' as const) : ('GROUP' as const);
    const found = (key: string) =>
      !KEY_TYPES.has(keyType)
        ? { nodeId: -1, host: '', port: -1, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Key type ${keyType} is not one Kafka defines; ask for 0 (a group) or 1 (a transactional id).` }
        : ctx.access.allows('DESCRIBE', resource, key)
          ? { nodeId, host, port, errorCode: NONE, errorMessage: null }
          : { nodeId: -1, host: '', port: -1, errorCode: DENIED_CODE[resource], errorMessage: `Not authorized to find the coordinator of ${resource === 'GROUP' ? 'group' : 'transactional id'} '${key}'.` };
    if (ctx.header.apiVersion < 4) return { throttleTimeMs: 0, ...found(request.key) };
    return { throttleTimeMs: 0, coordinators: request.coordinatorKeys.map((key) => ({ key, ...found(key) })) };
  },
};
