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
// answers. v5 is transaction version 2 (KIP-890 part 2), chosen by the
// request's version as Kafka's coordinator does: every end bumps the epoch,
// the markers carry the new one, and the answer gives the producer id and
// epoch to go on with (a new producer id when the epoch is spent). A retry
// with the epoch before the bump gets the same answer; an abort with nothing
// open still bumps the epoch. Clients send v5 only when ApiVersions finalizes
// transaction.version 2 (--transaction-version).
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
        bumpsEpoch: ctx.header.apiVersion >= 5,
      });
      return { throttleTimeMs: 0, errorCode: NONE, producerId, producerEpoch };
    } catch (e) {
      return { throttleTimeMs: 0, errorCode: transactionalErrorOf(e, ctx.header.apiVersion, 2).errorCode, producerId: -1n, producerEpoch: -1 };
    }
  },
};
