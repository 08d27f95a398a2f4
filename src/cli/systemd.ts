/**
 * Readiness for systemd's Type=notify. systemd starts dependent units (and
 * `systemctl start` returns) once the service says READY=1 on the socket
 * named by NOTIFY_SOCKET; said after the listeners accept, it means a client
 * that starts next can connect. Node cannot send on a Unix datagram socket,
 * so this runs `systemd-notify`, the standard helper; systemd takes its
 * message for the service's with NotifyAccess=all (deploy/*.service).
 * Without NOTIFY_SOCKET (not under systemd) it does nothing.
 */
import { execFile } from 'node:child_process';
import type { Logger } from 'pino';

/** Sends the states (`--ready`, `--status=...`, `STOPPING=1`) to systemd; resolves once it has them or the helper failed (logged). */
export function notifyServiceManager(log: Logger, states: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (env['NOTIFY_SOCKET'] === undefined || env['NOTIFY_SOCKET'] === '') return Promise.resolve();
  return new Promise((resolve) => {
    // systemd-notify waits (a barrier) until systemd has read the message, so it is not lost when the helper exits first.
    execFile('systemd-notify', [...states], { env, timeout: 30_000 }, (error, _stdout, stderr) => {
      if (error) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        log.warn(
          { states, stderr: stderr.trim() },
          missing
            ? 'NOTIFY_SOCKET is set but systemd-notify is not installed, so systemd is not told this process is ready: install systemd (it ships the helper) or use Type=simple in the unit.'
            : `systemd-notify failed (${error.message.trim()}), so systemd may not know this process is ready; check the unit has NotifyAccess=all.`,
        );
      }
      resolve();
    });
  });
}

/** READY=1 with a status line `systemctl status` shows. */
export function notifyReady(log: Logger, status: string): Promise<void> {
  return notifyServiceManager(log, ['--ready', `--status=${status}`]);
}
