/**
 * Redis URLs, checked without loading the Redis client, so settings are
 * validated at start by every command, clustered or not, at no cost.
 */

/** The URL as it may be shown: scheme, host, port and database, never the password. */
export function redisWhere(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.hostname || 'localhost'}:${u.port || '6379'}${u.pathname.length > 1 ? u.pathname : ''}`;
}

/** Why a Redis URL cannot be used, as a sentence saying what to fix, or null when it looks right. */
export function redisUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `The Redis URL ${JSON.stringify(url)} is not a URL; give one like redis://127.0.0.1:6379 (or rediss:// for TLS).`;
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    return `The Redis URL must start with redis:// or rediss://; got ${JSON.stringify(u.protocol)}. Give one like redis://127.0.0.1:6379.`;
  }
  if (u.pathname.length > 1 && !/^\/\d+$/.test(u.pathname)) {
    return `The Redis URL's path must be a database number, like redis://127.0.0.1:6379/0; got ${JSON.stringify(u.pathname)}.`;
  }
  return null;
}
