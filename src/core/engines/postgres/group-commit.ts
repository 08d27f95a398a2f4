import { isUnavailableError } from './availability.js';

/**
 * Group commit: appends that arrive while one database transaction is in
 * flight wait, and all of them then commit together in the next one. One
 * append alone goes at once (no added latency); under load, N concurrent
 * appends cost one transaction and one WAL flush instead of N, and their
 * partition row locks are taken once instead of being queued for N times.
 *
 * When a group's transaction fails, each member is retried alone, so one bad
 * call (or a conflict with another process) fails only itself; when the
 * database is not answering, all fail at once.
 */

export class GroupCommit<Request, Result> {
  private waiting: { request: Request; resolve: (r: Result) => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly commitGroup: (requests: Request[]) => Promise<Result[]>,
    private readonly maxGroup: number,
    private readonly enabled: boolean,
  ) {}

  submit(request: Request): Promise<Result> {
    if (!this.enabled) return this.commitGroup([request]).then((r) => r[0]!);
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.waiting.length > 0) {
        const group = this.waiting.splice(0, this.maxGroup);
        try {
          const results = await this.commitGroup(group.map((w) => w.request));
          group.forEach((w, i) => w.resolve(results[i]!));
        } catch (e) {
          // A database that does not answer fails every member alike; retrying each
          // alone would make the last one wait out the timeout once per member.
          if (group.length === 1 || isUnavailableError(e)) {
            for (const member of group) member.reject(e);
            continue;
          }
          for (const member of group) {
            try {
              member.resolve((await this.commitGroup([member.request]))[0]!);
            } catch (alone) {
              member.reject(alone);
            }
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
