/**
 * Test certificates, made at test time with openssl into a temp directory
 * (never committed): a CA, a server certificate for 127.0.0.1/localhost and
 * client certificates signed by it, and a second CA nothing trusts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** Makes a client certificate with this subject (openssl -subj form, e.g. "/O=Acme/CN=app"), signed by the CA or by an untrusted one. */
  client(name: string, subject: string, options?: { untrusted?: boolean }): { cert: string; key: string };
  /** Makes another server certificate under the same CA (for reload tests), with this CN. */
  server(name: string, commonName: string): { cert: string; key: string };
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.pem`);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`], dir);
  return { cert, key };
}

function signed(dir: string, ca: { cert: string; key: string }, name: string, subject: string, extensions: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject], dir);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext], dir);
  return { cert, key };
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'queen-pki-'));
  const ca = makeCa(dir, 'test-ca');
  let untrustedCa: { cert: string; key: string } | null = null;
  const serverExt = 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n';
  const server = signed(dir, ca, 'server', '/CN=localhost', serverExt);
  return {
    dir,
    caCert: ca.cert,
    serverCert: server.cert,
    serverKey: server.key,
    client(name, subject, options = {}) {
      const issuer = options.untrusted ? (untrustedCa ??= makeCa(dir, 'untrusted-ca')) : ca;
      return signed(dir, issuer, name, subject, 'extendedKeyUsage=clientAuth\n');
    },
    server(name, commonName) {
      return signed(dir, ca, name, `/CN=${commonName}`, serverExt);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
