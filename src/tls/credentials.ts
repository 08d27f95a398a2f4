/**
 * TLS credentials from files, for every TLS door (the Kafka listeners, the
 * HTTP API, the RPC's server and client): a certificate chain and key in PEM,
 * optionally CA certificates the peer's certificate must chain to. The files
 * are read at start (a problem stops the start, saying which file and why)
 * and watched: when one changes (a renewed certificate), the new pair is
 * loaded and everything using it switches to it for new connections; a pair
 * that does not load keeps the old one in service and is logged.
 *
 * Client certificates follow Kafka's ssl.client.auth: `none`, `requested`
 * (a client may present one; if it does, it must verify) and `required`.
 * What a verified certificate means (a Kafka principal, a gateway allowed at
 * the core) is the user's business (src/gateway/tls.ts, src/rpc/server.ts).
 *
 * Its own room because the gateway, the HTTP API and the RPC all use it and
 * the RPC may not import the gateway.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { Logger } from 'pino';

export const CLIENT_AUTH_MODES = ['none', 'requested', 'required'] as const;
export type ClientAuth = (typeof CLIENT_AUTH_MODES)[number];

export interface TlsFiles {
  /** PEM certificate chain the server presents. */
  certFile: string;
  /** PEM private key of that certificate. */
  keyFile: string;
  /** PEM CA certificates client certificates must chain to (needed unless clientAuth is none). */
  caFile?: string;
  clientAuth?: ClientAuth;
}

/** How often the files are checked for changes. */
const WATCH_INTERVAL_MS = 1_000;

export class TlsCredentials {
  private current: SecureContextOptions;
  private readonly subscribers = new Set<(options: SecureContextOptions) => void>();
  private watching = false;

  constructor(
    readonly files: TlsFiles,
    private readonly log?: Logger,
  ) {
    if ((files.clientAuth ?? 'none') !== 'none' && files.caFile === undefined) {
      throw new Error(`Client certificates (${files.clientAuth}) need the CA they must chain to: give the CA file (caFile).`);
    }
    this.current = load(files);
  }

  get clientAuth(): ClientAuth {
    return this.files.clientAuth ?? 'none';
  }

  /** The loaded certificate, key and CA, for a secure context (a TLS client's, or a server's on reload). */
  contextOptions(): SecureContextOptions {
    return this.current;
  }

  /** Options for tls.createServer / https: the loaded pair and the client-certificate policy. */
  serverOptions(): SecureContextOptions & { requestCert: boolean; rejectUnauthorized: boolean } {
    // `requested` asks for a certificate without demanding one; a presented one that does not verify is refused in principalOf.
    return { ...this.current, requestCert: this.clientAuth !== 'none', rejectUnauthorized: this.clientAuth === 'required' };
  }

  /** Calls `apply` with the new context options whenever the files change and load; starts watching on first use. */
  onReload(apply: (options: SecureContextOptions) => void): () => void {
    this.subscribers.add(apply);
    if (!this.watching) this.watch();
    return () => {
      this.subscribers.delete(apply);
      if (this.subscribers.size === 0) this.unwatch();
    };
  }

  private readonly reload = (): void => {
    let loaded: SecureContextOptions;
    try {
      loaded = load(this.files);
    } catch (e) {
      this.log?.warn({ err: (e as Error).message }, 'TLS files changed but do not load; still serving the previous certificate');
      return;
    }
    this.current = loaded;
    this.log?.info({ certFile: this.files.certFile }, 'TLS certificate reloaded');
    for (const apply of this.subscribers) apply(this.current);
  };

  private watch(): void {
    this.watching = true;
    for (const file of this.watchedFiles()) watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, this.reload);
  }

  private unwatch(): void {
    this.watching = false;
    for (const file of this.watchedFiles()) unwatchFile(file, this.reload);
  }

  private watchedFiles(): string[] {
    return [this.files.certFile, this.files.keyFile, ...(this.files.caFile === undefined ? [] : [this.files.caFile])];
  }
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new Error(`The TLS ${what} file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); check the path and its permissions.`);
  }
}

/** Reads the files and checks they make a usable context, so a bad pair fails here and not at the first client. */
function load(files: TlsFiles): SecureContextOptions {
  const options: SecureContextOptions = { cert: readPem(files.certFile, 'certificate'), key: readPem(files.keyFile, 'key') };
  if (files.caFile !== undefined) options.ca = readPem(files.caFile, 'CA');
  try {
    createSecureContext(options);
  } catch (e) {
    throw new Error(`The TLS certificate ${files.certFile} and key ${files.keyFile} do not load together: ${(e as Error).message}.`);
  }
  return options;
}
