/**
 * GET /health answers 200 { status: "ok" } when the core answers a listing,
 * 503 with the reason when it does not (a database that went away).
 * GET /metrics is the Prometheus text exposition (../metrics.ts).
 */
import type { HttpApiContext } from '../context.js';

export function registerOperationsRoutes({ app, core, metrics }: HttpApiContext): void {
  app.get('/health', { schema: {} }, async (_request, reply) => {
    try {
      await core.listQueues();
      return { status: 'ok' };
    } catch (e) {
      return reply.status(503).send({ status: 'unavailable', message: `The core does not answer: ${(e as Error).message}` });
    }
  });

  app.get('/metrics', { schema: {} }, async (_request, reply) => {
    const text = await metrics.render(core);
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
  });
}
