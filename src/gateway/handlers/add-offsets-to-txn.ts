// AddOffsetsToTxn: puts a consumer group in the producer's open transaction
// (opening one when none is), before TxnOffsetCommit sends its offsets.
//
// Versions: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2, as Kafka
// answers.
//
// ACLs: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
// and READ on the group (else GROUP_AUTHORIZATION_FAILED), as Kafka's.
import { AddOffsetsToTxn } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { transactionalErrorOf } from '../transactional-errors.js';

export const addOffsetsToTxn: ApiHandler<typeof AddOffsetsToTxn> = {
  api: AddOffsetsToTxn,
  versions: '0-4',
  async handle(request, ctx) {
    if (!ctx.access.allows('WRITE', 'TRANSACTIONAL_ID', request.transactionalId)) return { throttleTimeMs: 0, errorCode: DENIED_CODE.TRANSACTIONAL_ID };
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return { throttleTimeMs: 0, errorCode: DENIED_CODE.GROUP };
    try {
      await ctx.core.addOffsetsToTxn({
        transactionalId: request.transactionalId,
        producerId: Number(request.producerId),
        producerEpoch: request.producerEpoch,
        group: request.groupId,
      });
      return { throttleTimeMs: 0, errorCode: NONE };
    } catch (e) {
      return { throttleTimeMs: 0, errorCode: transactionalErrorOf(e, ctx.header.apiVersion, 2).errorCode };
    }
  },
};
