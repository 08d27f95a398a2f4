/**
 * GET /health answers as Queen does: 200 { status: "healthy", database:
 * "connected", ... } when the core answers a listing, 503 { status:
 * "unhealthy", database: "disconnected", message } with Retry-After when it
 * fails or does not answer within the health timeout (a database that went
 * away or hangs).
 * GET /metrics and /metrics/prometheus are the Prometheus text exposition
 * (src/metrics: the process's series, this API's counters, the core's
 * figures); Queen's /metrics answers JSON, which is not built.
 */
import type { HttpApiContext } from '../context.js';
import { RETRY_AFTER_SECONDS } from '../errors.js';
import { coreProblem } from '../../operations/health.js';
import { CONTENT_TYPE } from '../../metrics/process.js';

const SERVER = 'queen-gateway';

export function registerOperationsRoutes({ app, core, metrics, healthTimeoutMs }: HttpApiContext): void {
  app.get('/health', { schema: {} }, async (_request, reply) => {
    const message = await coreProblem(core, healthTimeoutMs);
    if (message === null) return { status: 'healthy', database: 'connected', server: SERVER };
    void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return reply.status(503).send({ status: 'unhealthy', database: 'disconnected', server: SERVER, message, error: message });
  });

  const prometheus = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const text = await metrics.render(core);
    return reply.type(CONTENT_TYPE).send(text);
  };
  app.get('/metrics', { schema: {} }, prometheus);
  app.get('/metrics/prometheus', { schema: {} }, prometheus);
}
