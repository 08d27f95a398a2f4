/**
 * Waiting without timing assertions: poll a condition until it holds, and on
 * timeout fail with a sentence that says what never happened and, when the
 * caller can tell, what was there instead.
 */

export interface WaitOptions {
  /** What the wait is for, as the failure sentence will read ("all 500 records delivered"). */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** Called on timeout for the current state, appended to the message. */
  describe?: () => string;
}

export async function waitFor(condition: () => boolean | Promise<boolean>, options: WaitOptions): Promise<void> {
  const { what, timeoutMs = 30_000, intervalMs = 25, describe } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) {
      const state = describe ? `; ${describe()}` : '';
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}${state}`);
    }
    await sleep(intervalMs);
  }
}

/** Rejects with a sentence naming the step when `promise` has not settled in time. */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${timeoutMs} ms: ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
