/** Queen's native HTTP API over the core: the app factory, the listener, and the metrics it keeps. */
export { buildHttpApi, DEFAULT_HTTP_BODY_LIMIT, type HttpApiOptions } from './app.js';
export { startHttpServer, DEFAULT_HTTP_PORT, type HttpServer, type HttpServerOptions } from './server.js';
export { HttpMetrics } from '../operations/registry.js';
export { CORE_ERROR_STATUS, type ErrorAnswer, type HttpErrorCode } from './errors.js';
export { CORE_ONLY_SOURCES, type ConsoleCluster, type ConsoleNode, type ConsoleSources } from './console/index.js';
export { checkReadiness, type Readiness, type ReadinessProbe } from './readiness.js';
