import { QueenHttpError } from './errors.js';

/**
 * The one place the client speaks HTTP: JSON in, JSON out, the server's error
 * sentence raised as a QueenHttpError. Uses the global fetch.
 */
export class HttpTransport {
  private readonly base: string;

  constructor(
    url: string,
    private readonly fetchImpl: typeof fetch = globalThis.fetch,
  ) {
    this.base = url.replace(/\/+$/, '');
  }

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ status: number; body: T }> {
    const response = await this.fetchImpl(this.base + path, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      ...(signal ? { signal } : {}),
    });
    const text = await response.text();
    let parsed: unknown = null;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) {
      const error = parsed as { code?: string; message?: string } | null;
      throw new QueenHttpError(
        typeof error?.message === 'string' ? error.message : `${method} ${path} answered HTTP ${response.status}.`,
        response.status,
        typeof error?.code === 'string' ? error.code : 'http_error',
      );
    }
    return { status: response.status, body: parsed as T };
  }
}

/** One URL path segment. */
export const segment = (value: string): string => encodeURIComponent(value);
