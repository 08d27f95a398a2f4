/**
 * A process's life as every command lives it: logs on stdout, and a clean
 * stop on SIGTERM or SIGINT (the service's own stop: stop accepting, answer
 * long-polls, drain, close), a second signal exiting at once.
 */
import { pino, type Logger } from 'pino';
import { notifyServiceManager } from './systemd.js';

/**
 * pino on stdout, written synchronously: pino's asynchronous destination
 * retries a write that failed with EPIPE for ever when it flushes at exit, so
 * a process whose stdout reader had gone (a closed pipe, a dead log shipper)
 * never exited on SIGTERM. A synchronous write that fails with EPIPE instead
 * turns logging off (pino's own handling of that error) and shutdown goes on.
 */
export function processLogger(level: string, service: string): Logger {
  return pino({ level, base: { service } }, pino.destination({ dest: 1, sync: true }));
}

/**
 * SIGTERM and SIGINT, handled from before the service starts: a signal while
 * it is still starting (waiting for its database, say) exits at once; once it
 * serves (`serving`), the first signal runs its stop and exits 0 (1 if the
 * stop failed), and a second one exits 1 at once.
 */
export class SignalHandling {
  private stop: (() => Promise<void>) | null = null;
  private signalled = false;

  constructor(private readonly log: Logger) {
    process.on('SIGINT', () => this.shutDown('SIGINT'));
    process.on('SIGTERM', () => this.shutDown('SIGTERM'));
  }

  serving(stop: () => Promise<void>): void {
    this.stop = stop;
  }

  private shutDown(signal: string): void {
    if (this.signalled) {
      this.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    this.signalled = true;
    if (this.stop === null) {
      this.log.info({ signal }, 'stopping before it was ready');
      process.exit(0);
    }
    this.log.info({ signal }, 'shutting down');
    void notifyServiceManager(this.log, ['STOPPING=1']);
    this.stop().then(
      () => process.exit(0),
      (e) => {
        this.log.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  }
}
