/**
 * One of Queen's suites against a fresh gateway: starts the gateway in this
 * process with its HTTP API on a free port (memory, or a fresh PostgreSQL
 * schema; retention every 2 s), runs the suite, stops the gateway.
 */
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { openCore } from '../../src/core/index.js';
import { startBroker } from '../../src/index.js';
import { freePort } from '../support/gateway.js';
import { findTestDatabase } from '../support/postgres.js';
import { RUNNERS } from './runners.js';
import type { SuiteName, TestResult } from './suites.js';

const RETENTION_INTERVAL_MS = 2_000;

export interface SuiteReport {
  suite: SuiteName;
  engine: 'memory' | 'postgres';
  results: TestResult[];
}

export interface GatewayRunOptions {
  engine: 'memory' | 'postgres';
  suite: SuiteName;
  group: 'human' | 'stream';
  only?: string[];
  skip?: string[];
  from?: string;
  timeoutMs: number;
  echo?: boolean;
}

export async function runSuitesOnGateway(options: GatewayRunOptions): Promise<SuiteReport> {
  const found = await findTestDatabase();
  if (!found.database) throw new Error(`Queen's suites need PostgreSQL (their own pool connects to it): ${found.skipReason}`);
  const database = found.database;
  const httpPort = await freePort();
  const logger = pino({ level: process.env['QUEEN_SUITES_LOG'] ?? 'silent' });
  // Retention every 2 s, as Queen's retention tests ask of Queen (RETENTION_INTERVAL=2000).
  const core = await openCore({
    ...(options.engine === 'memory' ? { engine: 'memory' } : { engine: 'postgres', url: database.url, schema: database.freshSchema('queen_suites') }),
    maintenanceIntervalMs: RETENTION_INTERVAL_MS,
    log: logger,
  });
  const broker = await startBroker({
    host: '127.0.0.1',
    port: 0,
    autoCreateTopics: false,
    core,
    logger,
    shutdownGraceMs: 2_000,
    http: { host: '127.0.0.1', port: httpPort, encryptionKey: randomBytes(32).toString('hex') },
  }).catch(async (e: unknown) => {
    await core.close();
    throw e;
  });
  if (options.echo) console.log(`gateway (${options.engine}): HTTP API at http://127.0.0.1:${httpPort}`);
  try {
    const results = await RUNNERS[options.suite]({
      url: `http://127.0.0.1:${httpPort}`,
      databaseUrl: database.url,
      group: options.group,
      timeoutMs: options.timeoutMs,
      ...(options.only ? { only: options.only } : {}),
      ...(options.skip ? { skip: options.skip } : {}),
      ...(options.from ? { from: options.from } : {}),
      ...(options.echo ? { echo: true } : {}),
    });
    return { suite: options.suite, engine: options.engine, results };
  } finally {
    await broker.stop();
    await core.close();
    await database.release();
  }
}
