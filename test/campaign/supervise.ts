/**
 * `npm run campaign` runs the campaign in a child process and exits with its
 * verdict, whether or not the child manages to exit.
 *
 * Why: a run's process could hang after its last line, in `process.exit`
 * itself. A gdb backtrace of one (the 1,000,000-record run of
 * docs/fault-campaign.md) showed the main thread in
 * `uv__threadpool_cleanup` joining libuv's worker threads, one of them
 * still inside librdkafka's `rd_kafka_send_offsets_to_transaction`, waiting
 * for ever (abs_timeout -1 although the call passed 30 s) for a producer the
 * processor had given up on, whose own thread was stuck in
 * `rd_kafka_txns_term`. Node joins the pool on every exit path, so nothing
 * in that process can end it but a signal. The child tells the verdict's
 * exit code over IPC before it exits; if it has not exited 30 s later it is
 * SIGKILLed and this process exits with that code.
 */
import { fork } from 'node:child_process';

const CHILD_FLAG = 'CAMPAIGN_CHILD_PROCESS'; // not QUEEN_*: the cores and gateways refuse unknown QUEEN_ settings
const EXIT_GRACE_MS = 30_000;

/** True in the forked child, which runs the campaign. */
export const isCampaignChild = (): boolean => process.env[CHILD_FLAG] === '1';

/** In the child: tells the parent the exit code, then exits (or tries to). */
export function exitWithVerdict(code: number): void {
  if (!process.send) process.exit(code);
  process.send({ code }, () => process.exit(code));
}

/** In the parent: runs this same script as the child and exits with its verdict. Never returns. */
export async function superviseCampaign(script: string, graceMs = EXIT_GRACE_MS): Promise<never> {
  const child = fork(script, process.argv.slice(2), { env: { ...process.env, [CHILD_FLAG]: '1' }, stdio: 'inherit' });
  let told: number | null = null;
  let timer: NodeJS.Timeout | null = null;
  child.on('message', (m: { code?: unknown }) => {
    if (typeof m?.code !== 'number') return;
    told = m.code;
    timer = setTimeout(() => {
      console.error(`campaign: the campaign process (pid ${child.pid}) had not exited ${graceMs / 1000} s after its verdict; SIGKILLed it (see test/campaign/supervise.ts)`);
      child.kill('SIGKILL');
    }, graceMs);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (timer) clearTimeout(timer);
  process.exit(told ?? exitCode ?? 1);
}
