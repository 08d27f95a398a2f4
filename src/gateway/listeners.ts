/**
 * Listeners named as Kafka names them: each is a security protocol on an
 * address, `SASL_SSL://127.0.0.1:9094`, with the address clients are told to
 * dial on it (`advertised.listeners`). Several run at once; a client is
 * answered, in Metadata and FindCoordinator, with the advertised address of
 * the listener it came in on, as Kafka does.
 *
 * The listener's name is its security protocol (Kafka's default
 * listener.security.protocol.map), so one listener per protocol.
 */

export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];

export interface ListenerAddress {
  name: SecurityProtocol;
  host: string;
  port: number;
}

export interface ListenerSpec extends ListenerAddress {
  /** What Metadata answers on this listener; default the bound address. */
  advertisedHost?: string;
  advertisedPort?: number;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

/** A host that binds every address, which clients cannot dial: such a listener needs an advertised host. */
export function isWildcardHost(host: string): boolean {
  return WILDCARD_HOSTS.has(host);
}

export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL';
}

export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
}

/**
 * Reads `PROTOCOL://host:port` (IPv6 hosts in brackets). Throws an Error whose
 * message says what is wrong with the text, for the caller to prefix with
 * where it came from.
 */
export function parseListener(text: string): ListenerAddress {
  const match = /^([A-Za-z_]+):\/\/(\[[^\]]*\]|[^:/]*):(\d+)$/.exec(text.trim());
  if (!match) {
    throw new Error(`${JSON.stringify(text)} is not a listener; write PROTOCOL://HOST:PORT, e.g. SASL_SSL://127.0.0.1:9094`);
  }
  const name = match[1]!.toUpperCase();
  if (!(SECURITY_PROTOCOLS as readonly string[]).includes(name)) {
    throw new Error(`${JSON.stringify(text)} names the security protocol ${match[1]}; use one of ${SECURITY_PROTOCOLS.join(', ')}`);
  }
  const port = Number(match[3]);
  if (port > 65535) throw new Error(`${JSON.stringify(text)} has port ${port}; a port is 0 to 65535`);
  const host = match[2]!.replace(/^\[(.*)\]$/, '$1');
  return { name: name as SecurityProtocol, host, port };
}

/**
 * Joins listeners with their advertised addresses; every listener appears
 * once, and an advertised address must name a listener that exists.
 */
export function joinAdvertised(listeners: readonly ListenerAddress[], advertised: readonly ListenerAddress[]): ListenerSpec[] {
  const seen = new Set<string>();
  for (const l of listeners) {
    if (seen.has(l.name)) throw new Error(`the listener ${l.name} is given twice; give each security protocol one listener`);
    seen.add(l.name);
  }
  const byName = new Map<string, ListenerAddress>();
  for (const a of advertised) {
    if (!seen.has(a.name)) throw new Error(`the advertised listener ${a.name}://${a.host}:${a.port} names no listener; add --listener ${a.name}://HOST:PORT or drop it`);
    if (byName.has(a.name)) throw new Error(`the advertised listener ${a.name} is given twice`);
    if (a.port === 0) throw new Error(`the advertised listener ${a.name}://${a.host}:0 has port 0; clients must be told a real port`);
    byName.set(a.name, a);
  }
  return listeners.map((l) => {
    const a = byName.get(l.name);
    return a ? { ...l, advertisedHost: a.host, advertisedPort: a.port } : { ...l };
  });
}
