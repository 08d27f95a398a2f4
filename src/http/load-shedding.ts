import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError } from './errors.js';

/**
 * Load shedding: at most `maxInFlight` requests of the API are at the core at
 * once (a long-poll pop holds its slot while it waits). One more is answered
 * 429 `overloaded` with Retry-After before its body is read, so it claims no
 * Idempotency-Key and writes nothing: the caller sends it again later. GET
 * /health, /ready and /metrics are not counted, so the gateway stays observable when
 * it is full. A slot is given back when the answer is sent or the client
 * goes away, whichever comes first.
 */

export const DEFAULT_HTTP_MAX_IN_FLIGHT = 1024;
const UNCOUNTED = /^\/(health|ready|metrics)(\/|$|\?)/;

export function installLoadShedding(app: FastifyInstance, maxInFlight: number): void {
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxInFlight must be a whole number of at least 1, not ${maxInFlight}.`);
  let inFlight = 0;
  const held = new WeakSet<FastifyReply>();
  const release = (reply: FastifyReply) => {
    if (!held.delete(reply)) return;
    inFlight--;
  };
  app.addHook('onRequest', async (request, reply) => {
    if (UNCOUNTED.test(request.url)) return;
    if (inFlight >= maxInFlight) {
      throw new HttpError(429, 'overloaded', `This gateway is at its limit of ${maxInFlight} requests in progress at the core; nothing was done. Send the request again after the Retry-After delay (the same Idempotency-Key is safe).`);
    }
    inFlight++;
    held.add(reply);
    reply.raw.once('close', () => release(reply));
  });
  app.addHook('onResponse', async (_request, reply) => release(reply));
}
