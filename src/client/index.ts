/** The typed client for Queen's native HTTP API. */
export { QueenClient, QueueHandle, KvClient, type QueenClientOptions } from './client.js';
export { TransactionBuilder, TransactionQueue } from './transaction.js';
export { QueenHttpError, QueenDuplicateError } from './errors.js';
export type * from './types.js';
