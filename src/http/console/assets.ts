/**
 * The console's page, styles and ES modules, served as they are from
 * ./assets (no build step). The files are listed once at start, so a request
 * can only ever name one of them: no path from the URL reaches the disk.
 * They carry no data, so they are open; the JSON routes beside them are not.
 * The Content-Security-Policy allows scripts and styles from this origin
 * only: even a value that slipped past the page's escaping could not run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RouteAccess } from '../access.js';

const ASSETS = fileURLToPath(new URL('./assets/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** Every asset by its URL path under /console/, read once. */
function readAssets(): Map<string, { body: Buffer; type: string }> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const entry of readdirSync(ASSETS, { withFileTypes: true, recursive: true })) {
    const type = CONTENT_TYPES[extname(entry.name)];
    if (!entry.isFile() || !type) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(ASSETS, path).split('\\').join('/'), { body: readFileSync(path), type });
  }
  return files;
}

const OPEN: RouteAccess = { open: true };

export function registerConsoleAssets(app: FastifyInstance): void {
  const files = readAssets();
  const send = (name: string, reply: FastifyReply) => {
    const file = files.get(name);
    if (!file) return reply.callNotFound();
    return reply.headers(SECURITY_HEADERS).type(file.type).send(file.body);
  };
  app.get('/', { schema: {}, config: OPEN }, (_request, reply) => send('index.html', reply));
  app.get<{ Params: { '*': string } }>('/console/*', { schema: {}, config: OPEN }, (request, reply) => send(request.params['*'], reply));
}
