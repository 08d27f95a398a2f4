/**
 * Where a core listens: TCP `host:port` (`[::1]:7070` for IPv6) or a Unix
 * socket, written as its path (`/run/queen/core.sock`) or `unix:` + path.
 */
export type RpcAddress = { host: string; port: number } | { path: string };

export function parseRpcAddress(text: string): RpcAddress {
  if (text.startsWith('unix:')) return { path: text.slice('unix:'.length) };
  if (text.startsWith('/') || text.startsWith('./')) return { path: text };
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 1 || port > 65535) {
    throw new Error(`"${text}" is not a core address; write HOST:PORT (for example core:7070) or the path of a Unix socket.`);
  }
  return { host: match[1] ?? match[2]!, port };
}

export function formatRpcAddress(address: RpcAddress): string {
  if ('path' in address) return `unix:${address.path}`;
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
