/**
 * GET /health answers as Queen does: 200 { status: "healthy", database:
 * "connected", ... } when the core answers a listing, 503 { status:
 * "unhealthy", database: "disconnected", message } when it does not (a
 * database that went away).
 * GET /metrics and /metrics/prometheus are the Prometheus text exposition
 * (../metrics.ts); Queen's /metrics answers JSON, which is not built.
 */
import type { HttpApiContext } from '../context.js';

const SERVER = 'queen-gateway';

export function registerOperationsRoutes({ app, core, metrics }: HttpApiContext): void {
  app.get('/health', { schema: {} }, async (_request, reply) => {
    try {
      await core.listQueues();
      return { status: 'healthy', database: 'connected', server: SERVER };
    } catch (e) {
      const message = `The core does not answer: ${(e as Error).message}`;
      return reply.status(503).send({ status: 'unhealthy', database: 'disconnected', server: SERVER, message, error: message });
    }
  });

  const prometheus = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const text = await metrics.render(core);
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
  };
  app.get('/metrics', { schema: {} }, prometheus);
  app.get('/metrics/prometheus', { schema: {} }, prometheus);
}
