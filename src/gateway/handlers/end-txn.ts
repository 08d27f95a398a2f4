// EndTxn: commits or aborts the producer's open transaction.
//
// The core writes a commit or abort marker (a control batch) to every
// partition of the transaction, and at commit moves the offsets sent with
// TxnOffsetCommit into the group's committed offsets, all before this
// answers; read_committed consumers then read past the transaction's records
// (or are told to drop them). Ending an ended transaction the same way again
// is a retry and succeeds; with nothing open it answers INVALID_TXN_STATE.
//
// Versions: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2, as Kafka
// answers. v5 (KIP-890) answers the producer id and epoch; the epoch is not
// bumped per transaction, because this gateway does not advertise
// transaction.version 2.
//
// ACLs: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
import { EndTxn } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { transactionalErrorOf } from '../transactional-errors.js';

export const endTxn: ApiHandler<typeof EndTxn> = {
  api: EndTxn,
  versions: '0-5',
  async handle(request, ctx) {
    if (!ctx.access.allows('WRITE', 'TRANSACTIONAL_ID', request.transactionalId)) {
      return { throttleTimeMs: 0, errorCode: DENIED_CODE.TRANSACTIONAL_ID, producerId: -1n, producerEpoch: -1 };
    }
    try {
      const { producerId, producerEpoch } = await ctx.core.endTxn({
        transactionalId: request.transactionalId,
        producerId: Number(request.producerId),
        producerEpoch: request.producerEpoch,
        commit: request.committed,
      });
      return { throttleTimeMs: 0, errorCode: NONE, producerId, producerEpoch };
    } catch (e) {
      return { throttleTimeMs: 0, errorCode: transactionalErrorOf(e, ctx.header.apiVersion, 2).errorCode, producerId: -1n, producerEpoch: -1 };
    }
  },
};
