import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTENT_TYPE } from './process.js';

/**
 * A small HTTP listener for processes without the HTTP API (the `core`
 * command, a gateway run with --no-http, the bridge): GET /metrics (the
 * Prometheus text exposition), /health (liveness: the process runs, unless
 * the caller asks more) and /ready (is the process serving: its store
 * answers, it is not shutting down). Both answer JSON with 200 or 503 and,
 * when not, the sentence saying why, as the HTTP API's /ready does.
 */

export interface OperationsEndpointOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  metrics(): Promise<string>;
  /** Null when healthy, else why not. Absent: healthy while the process runs. */
  health?(): Promise<string | null>;
  /** Null when ready, else why not. */
  ready(): Promise<string | null> | string | null;
}

export interface OperationsEndpoint {
  port: number;
  /** http://host:port */
  url: string;
  close(): Promise<void>;
}

const RETRY_AFTER_SECONDS = 1;

function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...(status === 503 ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {}) });
  res.end(JSON.stringify(body));
}

export async function serveOperations(options: OperationsEndpointOptions): Promise<OperationsEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const known = path === '/metrics' || path === '/health' || path === '/ready';
    if (!known) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('This listener serves GET /metrics, /health and /ready only.\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end(`${path} answers GET only.\n`);
      return;
    }
    const answer = async (): Promise<void> => {
      if (path === '/metrics') {
        const text = await options.metrics();
        res.writeHead(200, { 'content-type': CONTENT_TYPE }).end(text);
      } else if (path === '/health') {
        const problem = options.health ? await options.health() : null;
        json(res, problem === null ? 200 : 503, problem === null ? { status: 'healthy' } : { status: 'unhealthy', message: problem });
      } else {
        const problem = await options.ready();
        json(res, problem === null ? 200 : 503, problem === null ? { status: 'ready' } : { status: 'not ready', message: problem });
      }
    };
    answer().catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${path} failed: ${(e as Error)?.message ?? String(e)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    port,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
