// FindCoordinator: names the broker that coordinates a group or a
// transactional id: a gateway attached to the core node holding the key's
// coordinator lease (the core takes the lease when it is free or ran out;
// ../coordinator-gateways.ts). Alone, that is this gateway.
//
// Choices:
// - When the lease's holder has no live gateway this one knows of, the answer
//   is COORDINATOR_NOT_AVAILABLE, which clients retry; the lease runs out and
//   the next FindCoordinator takes it.
// - Share groups (key type 2) are not served; their keys name this gateway.
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
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { coordinatorGateway, noteOwnCore, reachableCores } from '../coordinator-gateways.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

/** Kafka's CoordinatorType ids: group, transaction, share. */
const KEY_TYPES: ReadonlySet<number> = new Set([0, 1, 2]);

export const findCoordinator: ApiHandler<typeof FindCoordinator> = {
  api: FindCoordinator,
  versions: '0-6',
  async handle(request, ctx) {
    const keyType: number = request.keyType;
    const resource = keyType === 1 ? ('TRANSACTIONAL_ID' as const) : ('GROUP' as const);
    const keys: string[] = ctx.header.apiVersion < 4 ? [request.key] : request.coordinatorKeys;
    const allowed = new Set(KEY_TYPES.has(keyType) ? keys.filter((key) => ctx.access.allows('DESCRIBE', resource, key)) : []);
    const owners = new Map<string, string | null>();
    let selfCore = '';
    let failure: { errorCode: number; errorMessage: string } | null = null;
    if (allowed.size > 0 && keyType !== 2) {
      try {
        const answer = await ctx.core.findCoordinators({ kind: keyType === 1 ? 'transaction' : 'group', keys: [...allowed], reachable: reachableCores(ctx) });
        selfCore = answer.node;
        noteOwnCore(ctx, selfCore);
        for (const c of answer.coordinators) owners.set(c.key, c.owner);
      } catch (e) {
        // The store did not answer: clients retry FindCoordinator on COORDINATOR_NOT_AVAILABLE.
        failure = kafkaErrorOf(e, { unavailable: ErrorCode.COORDINATOR_NOT_AVAILABLE, closed: ErrorCode.COORDINATOR_NOT_AVAILABLE });
      }
    }
    const nobody = { nodeId: -1, host: '', port: -1 };
    const found = (key: string) => {
      if (!KEY_TYPES.has(keyType)) {
        return { ...nobody, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Key type ${keyType} is not one Kafka defines; ask for 0 (a group) or 1 (a transactional id).` };
      }
      if (!allowed.has(key)) {
        return { ...nobody, errorCode: DENIED_CODE[resource], errorMessage: `Not authorized to find the coordinator of ${resource === 'GROUP' ? 'group' : 'transactional id'} '${key}'.` };
      }
      if (failure) return { ...nobody, ...failure };
      const owner = owners.get(key);
      const gateway = owner === undefined ? ctx.settings.advertised : owner === null ? null : coordinatorGateway(ctx, owner, selfCore);
      if (!gateway) {
        return { ...nobody, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: `No live gateway serves the coordinator of '${key}' right now (its core is gone or the store did not answer); retry, its lease moves to a live core when it runs out.` };
      }
      return { nodeId: gateway.nodeId, host: gateway.host, port: gateway.port, errorCode: NONE, errorMessage: null };
    };
    if (ctx.header.apiVersion < 4) return { throttleTimeMs: 0, ...found(request.key) };
    return { throttleTimeMs: 0, coordinators: keys.map((key) => ({ key, ...found(key) })) };
  },
};
