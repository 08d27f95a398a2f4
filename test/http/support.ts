/**
 * The HTTP suites' harness: a core on each engine with a clock the test moves,
 * the HTTP app over it (fastify inject, no socket), and a QueenClient whose
 * fetch goes through inject too. PostgreSQL comes from the shared test
 * database harness; without one, its runs report themselves skipped.
 */
import type { FastifyInstance } from 'fastify';
import { openCore, type Core } from '../../src/core/index.js';
import { buildHttpApi } from '../../src/http/index.js';
import { QueenClient } from '../../src/client/index.js';
import { findTestDatabase, type TestDatabaseLookup } from '../support/postgres.js';

export interface HttpRig {
  core: Core;
  app: FastifyInstance;
  client: QueenClient;
  /** Moves the core's clock forward. */
  advance(ms: number): void;
  /** JSON request through inject: status and parsed body. */
  call(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** A fetch that answers from the app in-process. */
export function injectFetch(app: FastifyInstance): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const response = await app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers: (init?.headers ?? {}) as Record<string, string>,
      ...(init?.body === undefined || init.body === null ? {} : { payload: init.body as string }),
    });
    return new Response(response.statusCode === 204 ? null : response.body, { status: response.statusCode, headers: response.headers as Record<string, string> });
  }) as typeof fetch;
}

let lookup: Promise<TestDatabaseLookup> | null = null;

export interface EngineRigFactory {
  name: 'memory' | 'postgres';
  skipReason: string | null;
  /** A fresh core and the HTTP app over it; `http` adds options of the app (an encryption key). */
  open(http?: { encryptionKey?: string }): Promise<HttpRig>;
}

export async function httpEngines(): Promise<EngineRigFactory[]> {
  lookup ??= findTestDatabase();
  const found = await lookup;
  const rig = async (core: Core, clock: { now: number }, engine: string, http: { encryptionKey?: string } = {}): Promise<HttpRig> => {
    const app = await buildHttpApi({ core, readiness: { engine }, ...http });
    return {
      core,
      app,
      client: new QueenClient({ url: 'http://queen.test', fetch: injectFetch(app) }),
      advance: (ms) => {
        clock.now += ms;
      },
      call: async (method, url, body) => {
        const r = await app.inject({ method: method as 'GET', url, ...(body === undefined ? {} : { payload: body as object }) });
        return { status: r.statusCode, body: r.body.length > 0 && r.headers['content-type']?.toString().includes('json') ? r.json() : r.body };
      },
      close: async () => {
        await app.close();
        await core.close();
      },
    };
  };
  return [
    {
      name: 'memory',
      skipReason: null,
      open: async (http) => {
        const clock = { now: Date.now() };
        return rig(await openCore({ engine: 'memory', clock: () => clock.now }), clock, 'memory', http);
      },
    },
    {
      name: 'postgres',
      skipReason: found.skipReason,
      open: async (http) => {
        if (!found.database) throw new Error(`no PostgreSQL: ${found.skipReason}`);
        const clock = { now: Date.now() };
        const core = await openCore({ engine: 'postgres', url: found.database.url, schema: found.database.freshSchema('queen_http'), clock: () => clock.now, maintenanceIntervalMs: 0, poolSize: 4 });
        return rig(core, clock, 'postgres', http);
      },
    },
  ];
}

export async function releaseHttpEngines(): Promise<void> {
  if (lookup) await (await lookup).database?.release();
}
