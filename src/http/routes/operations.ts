/**
 * GET /health answers as Queen does: 200 { status: "healthy", database:
 * "connected", ... } when the core answers a listing, 503 { status:
 * "unhealthy", database: "disconnected", message } with Retry-After when it
 * fails or does not answer within the health timeout (a database that went
 * away or hangs).
 * GET /metrics and /metrics/prometheus are the Prometheus text exposition
 * (../metrics.ts); Queen's /metrics answers JSON, which is not built.
 */
import type { HttpApiContext } from '../context.js';
import { RETRY_AFTER_SECONDS } from '../errors.js';

const SERVER = 'queen-gateway';

export function registerOperationsRoutes({ app, core, metrics, healthTimeoutMs }: HttpApiContext): void {
  app.get('/health', { schema: {} }, async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`it did not answer within ${healthTimeoutMs} ms`)), healthTimeoutMs);
    });
    try {
      // A hung database must not hang the probe: the answer comes by the deadline either way.
      await Promise.race([core.listQueues(), deadline]);
      return { status: 'healthy', database: 'connected', server: SERVER };
    } catch (e) {
      const message = `The core does not answer: ${(e as Error).message}`;
      void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      return reply.status(503).send({ status: 'unhealthy', database: 'disconnected', server: SERVER, message, error: message });
    } finally {
      clearTimeout(timer);
    }
  });

  const prometheus = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const text = await metrics.render(core);
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
  };
  app.get('/metrics', { schema: {} }, prometheus);
  app.get('/metrics/prometheus', { schema: {} }, prometheus);
}
