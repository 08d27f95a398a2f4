import type { AckOptions, Message } from './types.js';

/** The group an ack is for: given (consumerGroup, or the seed's `group`), else the one the message was popped under. */
export function consumerGroupOf(message: Pick<Message, 'consumerGroup'>, options: AckOptions): string {
  const group = options.consumerGroup ?? options.group ?? message.consumerGroup;
  if (!group) throw new TypeError('ack needs a consumer group: pass { consumerGroup } (or { group }), or ack a message that came from pop.');
  return group;
}
