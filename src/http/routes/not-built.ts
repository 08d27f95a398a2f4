/**
 * Queen routes this gateway does not build, each answering 501 with a
 * sentence naming the feature, so a Queen client learns what is missing
 * instead of meeting a bare 404. src/http/README.md lists them.
 */
import type { HttpApiContext } from '../context.js';
import { HttpError } from '../errors.js';

const NOT_BUILT: ReadonlyArray<[method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, feature: string]> = [
  ['GET', '/api/v1/pop', 'popping by namespace and task across queues'],
  ['POST', '/api/v1/traces', 'message traces'],
  ['GET', '/api/v1/traces/names', 'message traces'],
  ['GET', '/api/v1/traces/by-name/:traceName', 'message traces'],
  ['GET', '/api/v1/traces/:partitionId/:transactionId', 'message traces'],
  ['GET', '/api/v1/messages', 'browsing and editing single messages'],
  ['GET', '/api/v1/messages/:partitionId/:transactionId', 'browsing and editing single messages'],
  ['DELETE', '/api/v1/messages/:partitionId/:transactionId', 'browsing and editing single messages'],
  ['POST', '/api/v1/messages/:partitionId/:transactionId/retry', 'browsing and editing single messages'],
  ['POST', '/api/v1/messages/:partitionId/:transactionId/dlq', 'browsing and editing single messages'],
  ['DELETE', '/api/v1/queues/:queue/clear', 'clearing a queue (delete and push again, or let retention act)'],
  ['GET', '/api/v1/resources/partitions', 'the partition listing (GET /api/v1/resources/queues/:queue lists a queue\'s partitions)'],
  ['GET', '/api/v1/status', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/status/queues', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/status/queues/:queue', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/status/queues/:queue/messages', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/status/analytics', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/analytics/system-metrics', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/analytics/worker-metrics', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/analytics/postgres-stats', 'the dashboard\'s status and analytics'],
  ['POST', '/api/v1/stats/refresh', 'the dashboard\'s status and analytics'],
  ['GET', '/api/v1/consumer-groups/lagging', 'consumer-group administration beyond the listing'],
  ['GET', '/api/v1/consumer-groups/:group', 'consumer-group administration beyond the listing'],
  ['POST', '/api/v1/consumer-groups/:group/subscription', 'consumer-group administration beyond the listing'],
];

export function registerNotBuiltRoutes({ app }: HttpApiContext): void {
  for (const [method, url, feature] of NOT_BUILT) {
    app.route({
      method,
      url,
      handler: async () => {
        throw new HttpError(501, 'not_supported', `${method} ${url} (${feature}) is not built in this gateway; src/http/README.md lists what is.`);
      },
    });
  }
}
