/**
 * The HTTP API's fastify app: Queen's native API over a Core. Routes live one
 * concern per file under ./routes; failures answer through ./errors.ts; the
 * URL layout and field names are written down in ./README.md.
 */
import { installAccessControl, type HttpAccessOptions } from './access.js';
import { Fastify, LogController, type FastifyInstance } from './fastify.js';
import type { Logger } from 'pino';
import type { Core } from '../core/core.js';
import { installErrorHandlers } from './errors.js';
import { installIdempotency } from './idempotency.js';
import { DEFAULT_HTTP_MAX_IN_FLIGHT, installLoadShedding } from './load-shedding.js';
import { HttpMetrics } from '../operations/registry.js';
import { installQueryStringReading } from './query-strings.js';
import { serializeJson } from './json.js';
import { registerConsumeRoutes } from './routes/consume.js';
import { registerConsumerGroupAdminRoutes } from './routes/consumer-group-admin.js';
import { registerConsumerGroupRoutes } from './routes/consumer-groups.js';
import { registerKvRoutes } from './routes/kv.js';
import { registerNotBuiltRoutes } from './routes/not-built.js';
import { registerMaintenanceRoutes } from './routes/maintenance.js';
import { registerOperationsRoutes } from './routes/operations.js';
import { registerPushRoutes } from './routes/push.js';
import { registerQueueRoutes } from './routes/queues.js';
import { registerStreamsRoutes } from './routes/streams.js';
import { registerTransactionRoutes } from './routes/transaction.js';
import { Maintenance } from './maintenance.js';
import { PayloadCipher } from './payload-cipher.js';
import { CORE_ONLY_SOURCES, registerConsole, type ConsoleSources } from './console/index.js';

export interface HttpApiOptions {
  core: Core;
  /** pino logger; request lines are not logged, failures are. Default silent. */
  log?: Logger;
  /** Largest request body accepted, in bytes. Default 8 MiB. */
  bodyLimit?: number;
  /** Counters to add to; default a fresh set. */
  metrics?: HttpMetrics;
  /** How long GET /ready waits for the core before answering 503. Default 2 s. */
  healthTimeoutMs?: number;
  /** What holds the data, as /health and /ready name it (default "core": unnamed), and the process's other listeners for /ready (default none). */
  readiness?: { engine: string; listeners?: () => Record<string, boolean> };
  /** Aborted when the server begins to close: long-polls answer at once with what they have, /ready answers 503. */
  stopping?: AbortSignal;
  /** Requests at the core at once; one more is answered 429 (./load-shedding.ts). Default 1024. */
  maxInFlight?: number;
  /** Serve HTTPS with this certificate and key (and client-certificate policy) instead of plain HTTP. */
  https?: import('node:tls').SecureContextOptions & { requestCert?: boolean; rejectUnauthorized?: boolean };
  /** Authentication and ACLs (./access.ts); off when absent. */
  access?: HttpAccessOptions;
  /** What the web console shows beside the core (the gateways, the topic-config catalogue); default the core's view alone. */
  console?: ConsoleSources;
  /** 64 hex characters: the AES-256-GCM key for queues configured with encryptionEnabled (./payload-cipher.ts). */
  encryptionKey?: string;
}

export const DEFAULT_HTTP_BODY_LIMIT = 8 * 1024 * 1024;
// Load balancers and orchestrators probe every few seconds with a timeout of
// a few seconds; a healthy core lists its queues in milliseconds.
export const DEFAULT_HEALTH_TIMEOUT_MS = 2_000;

// A KV key (up to 1,024 bytes) URL-encoded can be three times as long.
const MAX_PARAM_LENGTH = 4 * 1024;

export async function buildHttpApi(options: HttpApiOptions): Promise<FastifyInstance> {
  const bodyLimit = options.bodyLimit ?? DEFAULT_HTTP_BODY_LIMIT;
  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    ...(options.log ? { loggerInstance: options.log.child({ component: 'http' }) } : {}),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    ajv: {
      // Closed objects refuse unknown fields with a sentence instead of dropping them;
      // the transaction route picks an operation's schema by its `type`. No type
      // coercion: a string where a number belongs is refused, not read as one
      // ("0x10" is not 16); query strings are read strictly in ./query-strings.ts.
      customOptions: { removeAdditional: false, discriminator: true, allErrors: false, coerceTypes: false },
    },
    // A "__proto__" or "constructor" key in a payload is data like any other:
    // JSON.parse makes it an own property (never the prototype), it is stored
    // and served back as sent, as Queen stores any JSON payload.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
  }) as unknown as FastifyInstance;
  const metrics = options.metrics ?? new HttpMetrics();
  installErrorHandlers(app, bodyLimit);
  installLoadShedding(app, options.maxInFlight ?? DEFAULT_HTTP_MAX_IN_FLIGHT);
  installQueryStringReading(app);
  app.setReplySerializer(serializeJson);
  if (options.access) installAccessControl(app, options.access);
  installIdempotency(app, options.core);
  app.addHook('onResponse', async (request, reply) => {
    metrics.requests.add({ route: request.routeOptions.url ?? 'unmatched', method: request.method, status: String(reply.statusCode) });
  });
  const stopping = options.stopping ?? new AbortController().signal;
  const readiness = { engine: options.readiness?.engine ?? 'core', listeners: options.readiness?.listeners ?? (() => ({})) };
  // The drainer of buffered pushes stops with the server, whichever of its stop or close comes first.
  const closed = new AbortController();
  const maintenance = new Maintenance(options.core, AbortSignal.any([stopping, closed.signal]), options.log);
  app.addHook('onClose', async () => {
    closed.abort();
    await maintenance.stopped();
  });
  const context = { app, core: options.core, metrics, healthTimeoutMs: options.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS, readiness, stopping, maintenance, payloads: options.encryptionKey ? new PayloadCipher(options.encryptionKey) : null };
  registerPushRoutes(context);
  registerConsumeRoutes(context);
  registerTransactionRoutes(context);
  registerKvRoutes(context);
  registerQueueRoutes(context);
  registerConsumerGroupRoutes(context);
  registerConsumerGroupAdminRoutes(context);
  registerOperationsRoutes(context);
  registerMaintenanceRoutes(context);
  registerStreamsRoutes(context);
  registerNotBuiltRoutes(context);
  registerConsole({ app, core: options.core, sources: options.console ?? CORE_ONLY_SOURCES });
  await app.ready();
  await maintenance.resume().catch((e: unknown) => options.log?.warn({ err: e }, 'could not look for messages buffered during push maintenance'));
  return app;
}
