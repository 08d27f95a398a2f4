/**
 * GET /health answers 200 { status: "ok" } when the core answers a listing,
 * 503 with the reason (and Retry-After) when it fails or does not answer
 * within the health timeout (a database that went away or hangs).
 * GET /metrics is the Prometheus text exposition (../metrics.ts).
 */
import type { HttpApiContext } from '../context.js';
import { RETRY_AFTER_SECONDS } from '../errors.js';

export function registerOperationsRoutes({ app, core, metrics, healthTimeoutMs }: HttpApiContext): void {
  app.get('/health', { schema: {} }, async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`it did not answer within ${healthTimeoutMs} ms`)), healthTimeoutMs);
    });
    try {
      // A hung database must not hang the probe: the answer comes by the deadline either way.
      await Promise.race([core.listQueues(), deadline]);
      return { status: 'ok' };
    } catch (e) {
      void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      return reply.status(503).send({ status: 'unavailable', message: `The core is not healthy: ${(e as Error).message}` });
    } finally {
      clearTimeout(timer);
    }
  });

  app.get('/metrics', { schema: {} }, async (_request, reply) => {
    const text = await metrics.render(core);
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
  });
}
