// JoinGroup: a member joins or rejoins a consumer group. The call is held in
// the core's coordinator until the rebalance completes (every member rejoined,
// or the rebalance timeout dropped the rest), so it can take as long as the
// group's rebalance timeout; the connection's close releases it.
//
// Choices:
// - From v4 a first join (empty member id, no group.instance.id) answers
//   MEMBER_ID_REQUIRED with the id to rejoin with (KIP-394).
// - v0 has no rebalance timeout: the session timeout stands in, as in Kafka.
// - The client host is the connection's remote address without the port,
//   written `/127.0.0.1` as Kafka reports it.
//
// Versions: ProtocolType in the response from v7, SkipAssignment from v9
// (a static leader that came back to a stable group gets its old assignment;
// before v9 it is answered as a follower of its old id, as Kafka does).
//
// ACLs: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { JoinGroup } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { RequestOf, ResponseOf } from '../../../protocol/codec/types.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode } from '../kafka-errors.js';

/** A JoinGroup answered with an error only: no generation, no members. */
function refused(request: RequestOf<typeof JoinGroup>, errorCode: number, version: number): ResponseOf<typeof JoinGroup> {
  return { throttleTimeMs: 0, errorCode, generationId: -1, protocolType: null, protocolName: version >= 7 ? null : '', leader: '', skipAssignment: false, memberId: request.memberId, members: [] };
}

export const joinGroup: ApiHandler<typeof JoinGroup> = {
  api: JoinGroup,
  versions: '0-9',
  async handle(request, ctx) {
    const version = ctx.header.apiVersion;
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return refused(request, DENIED_CODE.GROUP, version);
    const result = await ctx.core.joinGroup(
      {
        group: request.groupId,
        memberId: request.memberId,
        groupInstanceId: request.groupInstanceId ?? null,
        clientId: ctx.header.clientId ?? '',
        clientHost: `/${ctx.connection.remoteHost}`,
        sessionTimeoutMs: request.sessionTimeoutMs,
        rebalanceTimeoutMs: version >= 1 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
        protocolType: request.protocolType,
        protocols: (request.protocols).map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
        requireKnownMemberId: version >= 4,
        skipAssignmentSupported: version >= 9,
        reason: request.reason ?? null,
      },
      { signal: ctx.connection.closed },
    );
    return {
      throttleTimeMs: 0,
      errorCode: groupErrorCode(result.error),
      generationId: result.generationId,
      protocolType: result.protocolType,
      // Before v7 the protocol name is not nullable; an error answers it empty.
      protocolName: result.protocolName ?? (version >= 7 ? null : ''),
      leader: result.leader,
      skipAssignment: result.skipAssignment,
      memberId: result.memberId,
      members: result.members,
    };
  },
  unavailable: (request, errorCode, ctx) => refused(request, errorCode, ctx.header.apiVersion),
};
