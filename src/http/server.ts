/**
 * The HTTP API on a socket: builds the app over a core and listens. close()
 * stops accepting, answers long-polls at once with what they have, lets other
 * answers in flight finish within the grace, then cuts what is left; the core
 * stays open, it belongs to the caller.
 */
import type { HttpAccessOptions } from './access.js';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Core } from '../core/core.js';
import type { Server as TlsServer } from 'node:tls';
import type { TlsCredentials } from '../tls/credentials.js';
import { buildHttpApi } from './app.js';
import type { ConsoleSources } from './console/index.js';

export interface HttpServerOptions {
  core: Core;
  log?: Logger;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 6632; 0 picks a free port. */
  port?: number;
  bodyLimit?: number;
  /** How long GET /ready waits for the core before answering 503. Default 2 s. */
  healthTimeoutMs?: number;
  /** What holds the data and the process's other listeners, for /health and /ready (./readiness.ts). */
  readiness?: { engine: string; listeners?: () => Record<string, boolean> };
  /** How long close() lets requests in flight finish (long-polls answer at once). Default 5 s. */
  graceMs?: number;
  /** Requests at the core at once before 429 `overloaded`. Default 1024. */
  maxInFlight?: number;
  /** Serve HTTPS with these certificate files (reloaded when they change). */
  tls?: TlsCredentials;
  /** Authentication and ACLs (./access.ts); off when absent. */
  access?: HttpAccessOptions;
  /** What the web console shows beside the core (./console/sources.ts). */
  console?: ConsoleSources;
  /** The AES-256-GCM key (64 hex characters) for queues configured with encryptionEnabled. */
  encryptionKey?: string;
}

export interface HttpServer {
  /** http://host:port, with the bound port. */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

export const DEFAULT_HTTP_PORT = 6632;

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const stopping = new AbortController();
  let listening = false;
  const app = await buildHttpApi({
    stopping: stopping.signal,
    readiness: {
      engine: options.readiness?.engine ?? 'core',
      listeners: () => ({ ...options.readiness?.listeners?.(), http: listening && !stopping.signal.aborted }),
    },
    core: options.core,
    log: options.log,
    bodyLimit: options.bodyLimit,
    healthTimeoutMs: options.healthTimeoutMs,
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.tls ? { https: options.tls.serverOptions() } : {}),
    ...(options.access ? { access: options.access } : {}),
    ...(options.console ? { console: options.console } : {}),
    ...(options.encryptionKey ? { encryptionKey: options.encryptionKey } : {}),
  });
  const stopReloads = options.tls?.onReload((context) => (app.server as unknown as TlsServer).setSecureContext(context));
  const host = options.host ?? '127.0.0.1';
  try {
    await app.listen({ host, port: options.port ?? DEFAULT_HTTP_PORT });
  } catch (e) {
    await app.close();
    stopReloads?.();
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`The HTTP API's port ${options.port ?? DEFAULT_HTTP_PORT} on ${host} is already in use; stop whatever holds it, choose another HTTP port (--http-port), or turn the HTTP API off (--no-http).`);
    }
    throw e;
  }
  listening = true;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? DEFAULT_HTTP_PORT);
  const shownHost = isIP(host) === 6 ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  return {
    url: `${options.tls ? 'https' : 'http'}://${shownHost}:${port}`,
    host,
    port,
    close() {
      closing ??= (async () => {
        stopReloads?.();
        // Long-polls answer now with what they have (usually nothing), rather than being cut off.
        stopping.abort();
        app.server.closeIdleConnections?.();
        const closed = app.close();
        // What is still open after the grace is cut, so close() never waits out a slow client.
        setTimeout(() => app.server.closeAllConnections?.(), options.graceMs ?? 5_000).unref();
        await closed;
      })();
      return closing;
    },
  };
}
