import type { CallOptions, Core } from '../core.js';
import type { Engine } from '../engine.js';
import { decideAck } from '../native/ack.js';
import { checkCreateQueues, pushCreatingQueues } from '../native/create-queues.js';
import { decidePush, preparePush } from '../native/push.js';
import { decideTransaction, prepareTransaction } from '../native/transaction.js';
import { requireInteger } from '../rules/arguments.js';
import { validateQueueName } from '../rules/names.js';
import { checkAckRequest, checkPopRequest } from '../rules/requests.js';

type Queues = Parameters<typeof pushCreatingQueues>[0];

/**
 * The front's Queen-native calls: push, pop, ack, lease renewal and the
 * native transaction. Push, ack and the transaction are planned here and
 * decided by the core (../native/) over the state the engine loads in its
 * atomic unit; a call the engine answers at once (memory) is answered with
 * no await in between, and no closure is made per call unless it asks to
 * create queues.
 */
export class NativeCalls<E extends Engine> {
  constructor(
    private readonly open: () => E,
    /** Where a push with createQueues creates the queues it lacks: the front, so they are checked as any other. */
    private readonly queues: Queues,
  ) {}

  /** The partitions of the Kafka topics among these queues, for routing native pushes. */
  private readonly fixedPartitions = (queues: string[]) => this.open().native.fixedPartitions(queues);

  async push(req: Parameters<Core['push']>[0]) {
    const native = this.open().native;
    if (checkCreateQueues(req?.createQueues)) return pushCreatingQueues(this.queues, req.items, async () => this.pushOnce(native, req));
    return this.pushOnce(native, req);
  }

  private pushOnce(native: E['native'], req: Parameters<Core['push']>[0]) {
    const call = preparePush(req, native.now(), this.fixedPartitions);
    return call instanceof Promise ? call.then((c) => native.push(c, decidePush)) : native.push(call, decidePush);
  }

  async pop(req: Parameters<Core['pop']>[0], options?: CallOptions) {
    const engine = this.open();
    const queue = validateQueueName(req?.queue);
    return engine.native.pop({ queue, owner: req.owner, ...checkPopRequest(req) }, options);
  }

  async ack(req: Parameters<Core['ack']>[0]) {
    const engine = this.open();
    validateQueueName(req?.queue);
    checkAckRequest(req);
    return engine.native.ack(req, decideAck);
  }

  async renewLease(req: Parameters<Core['renewLease']>[0]) {
    const engine = this.open();
    requireInteger(req?.extendMs, 'extendMs', 1);
    return engine.native.renewLease(req);
  }

  async transaction(req: Parameters<Core['transaction']>[0]) {
    const native = this.open().native;
    if (checkCreateQueues(req?.createQueues)) return pushCreatingQueues(this.queues, req.operations, async () => this.transactOnce(native, req));
    return this.transactOnce(native, req);
  }

  private transactOnce(native: E['native'], req: Parameters<Core['transaction']>[0]) {
    const call = prepareTransaction(req, native.now(), this.fixedPartitions);
    return call instanceof Promise ? call.then((c) => native.transaction(c, decideTransaction)) : native.transaction(call, decideTransaction);
  }
}
