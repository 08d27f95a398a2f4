/**
 * GET /health is liveness: 200 { status: "healthy", engine, server, store }
 * while the process runs, whatever its store does (an orchestrator restarts a
 * process whose liveness fails; that cures no database outage). `store` says
 * whether the store answers ({ answering, message, lastAnsweredAt }), as
 * known in memory (../../operations/core-watch.ts): /health never waits on it. GET /ready is
 * readiness (../readiness.ts): 200 { status: "ready", engine, listeners } when
 * the core answers a listing within the health timeout and every listener
 * accepts; otherwise 503 { status: "not_ready", ..., message } with
 * Retry-After: the core does not answer (a database that went away or hangs),
 * a listener is closed, or the process is shutting down.
 * GET /metrics and /metrics/prometheus are the Prometheus text exposition
 * (src/metrics: the process's series, this API's counters, the core's
 * figures, fresh or, while the store does not answer within 500 ms, the
 * last ones read: /metrics never hangs on the database); Queen's /metrics
 * answers JSON, which is not built.
 */
import type { HttpApiContext } from '../context.js';
import { RETRY_AFTER_SECONDS } from '../errors.js';
import { checkReadiness } from '../readiness.js';
import { CONTENT_TYPE } from '../../metrics/process.js';
import { CoreWatch } from '../../operations/core-watch.js';

const SERVER = 'queen-gateway';

export function registerOperationsRoutes({ app, core, metrics, healthTimeoutMs, readiness, stopping }: HttpApiContext): void {
  const watch = new CoreWatch(core, `The core (${readiness.engine})`, healthTimeoutMs);
  app.get('/health', { schema: {} }, async () => ({ status: 'healthy', engine: readiness.engine, server: SERVER, store: watch.status() }));

  app.get('/ready', { schema: {} }, async (_request, reply) => {
    const answer = await checkReadiness({ core, engine: readiness.engine, listeners: readiness.listeners, timeoutMs: healthTimeoutMs, stopping });
    const body = { status: answer.ready ? 'ready' : 'not_ready', engine: answer.engine, reachable: answer.reachable, listeners: answer.listeners, server: SERVER };
    if (answer.ready) return body;
    const message = answer.problems.join(' ');
    void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return reply.status(503).send({ ...body, message, error: message });
  });

  const prometheus = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const text = await metrics.render(watch);
    return reply.type(CONTENT_TYPE).send(text);
  };
  app.get('/metrics', { schema: {} }, prometheus);
  app.get('/metrics/prometheus', { schema: {} }, prometheus);
}
