import type { PushItem } from '../core/core.js';
import { LIFETIME_PROPERTIES } from './lifetimes.js';

/**
 * JSON-schema pieces more than one route uses. Objects are closed
 * (additionalProperties: false; push items excepted, below) so a misspelt field (transaction_id for
 * transactionId) is refused with a sentence naming it, instead of being
 * silently dropped. Names, sizes and ranges the core owns (queue-name
 * rules, the 65,535-byte transactionId) are left to the core, so there is one
 * rule and one sentence for each.
 */

export const NAME = { type: 'string', minLength: 1 } as const;

/**
 * Unlike the other bodies, a push item is open: Queen reads the fields it
 * knows and ignores the rest (its clients send `producerSub`, which Queen
 * stamps itself from the caller's credentials), so a field named here
 * nowhere is dropped, not refused.
 */
export const PUSH_ITEM = {
  type: 'object',
  required: ['queue'],
  properties: {
    queue: NAME,
    partition: NAME,
    transactionId: NAME,
    // Queen's trace id: kept with the message, answered by pops.
    traceId: { type: 'string', maxLength: 255 },
    payload: {},
    // Queen's clients name the payload `data` in some places; one of the two is taken.
    data: {},
  },
} as const;

/** A push item as the HTTP API takes it. */
export interface HttpPushItem {
  queue: string;
  partition?: string;
  transactionId?: string;
  traceId?: string;
  payload?: unknown;
  data?: unknown;
}

/** The core's push items: the payload is `payload`, else `data`, else an empty object (as Queen stores it). */
export function toPushItems(items: readonly HttpPushItem[]): PushItem[] {
  return items.map((item) => ({
    queue: item.queue,
    ...(item.partition === undefined ? {} : { partition: item.partition }),
    ...(item.transactionId === undefined ? {} : { transactionId: item.transactionId }),
    ...(item.traceId === undefined ? {} : { traceId: item.traceId }),
    payload: 'payload' in item ? item.payload : 'data' in item ? item.data : {},
  }));
}

export const MAX_PUSH_ITEMS = 10_000;

/** A transaction's push operation carries at least one item; POST /api/v1/push takes none too (PUSH_ITEMS_OR_NONE). */
export const PUSH_ITEMS = { type: 'array', minItems: 1, maxItems: MAX_PUSH_ITEMS, items: PUSH_ITEM } as const;

/** Queen answers an empty push 201 `[]` without touching its store; so does the gateway. */
export const PUSH_ITEMS_OR_NONE = { ...PUSH_ITEMS, minItems: 0 } as const;

export const ACK_FIELDS = {
  queue: NAME,
  partition: NAME,
  offset: { type: 'integer', minimum: 0 },
  status: { type: 'string', enum: ['completed', 'failed'] },
  consumerGroup: NAME,
  leaseId: NAME,
} as const;

export const ACK_REQUIRED = ['queue', 'partition', 'offset', 'status', 'consumerGroup'] as const;

export const KV_PATH = {
  type: 'object',
  required: ['ns', 'key'],
  properties: { ns: NAME, key: NAME },
} as const;

export { LIFETIME_PROPERTIES };
