/**
 * What a verified TLS client certificate means on a Kafka listener: the
 * connection's principal, its subject written as Kafka's default principal
 * builder writes it (RFC 2253, most specific part first):
 * `User:CN=app,OU=payments,O=Acme`. The certificate files themselves are
 * src/tls/credentials.ts's, shared with the HTTP API and the RPC.
 */
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

export { CLIENT_AUTH_MODES, TlsCredentials, type ClientAuth, type TlsFiles } from '../tls/credentials.js';

/**
 * The principal a TLS connection proved: its client certificate's subject
 * when it presented one that verified; null when it presented none. Throws
 * when it presented one that does not verify (the connection must close).
 */
export function certificatePrincipal(socket: TLSSocket): string | null {
  const cert = socket.getPeerX509Certificate();
  if (!cert) return null;
  if (!socket.authorized) throw new Error(`the client certificate does not verify: ${String(socket.authorizationError)}`);
  return `User:${distinguishedName(cert)}`;
}

/**
 * The subject in RFC 2253 order (last RDN first), as Java's
 * X500Principal.getName() writes it. Node gives one RDN per line, values
 * already escaped as RFC 2253 asks ("O=Acme\\, Inc").
 */
export function distinguishedName(cert: X509Certificate): string {
  return cert.subject
    .split('\n')
    .filter((line) => line !== '')
    .reverse()
    .join(',');
}
