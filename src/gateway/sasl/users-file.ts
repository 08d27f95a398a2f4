/**
 * PLAIN users from a file, as Kafka's PlainLoginModule takes them from JAAS
 * (`user_alice="secret"`): one `name=password` per line, `#` comments and
 * blank lines ignored. The passwords are hashed as the file is read (PBKDF2
 * with a fresh salt) and the clear text is dropped; the file itself is the
 * operator's to protect (mode 600). Re-read when it changes.
 *
 * For users kept in the core, hashed and salted, use the SCRAM store instead
 * (AlterUserScramCredentials): PLAIN checks it too.
 */
import { pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Logger } from 'pino';

interface HashedPassword {
  salt: Buffer;
  hash: Buffer;
}

const ITERATIONS = 4096;
const HASH_BYTES = 32;

function hashPassword(password: string, salt: Buffer): Buffer {
  return pbkdf2Sync(password, salt, ITERATIONS, HASH_BYTES, 'sha256');
}

export function parsePlainUsers(text: string, file: string): Map<string, HashedPassword> {
  const users = new Map<string, HashedPassword>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`${file} line ${i + 1} is not name=password; write one user per line, e.g. alice=alice-secret`);
    const name = line.slice(0, eq).trim();
    const password = line.slice(eq + 1);
    if (password === '') throw new Error(`${file} line ${i + 1} gives ${name} an empty password`);
    if (users.has(name)) throw new Error(`${file} line ${i + 1} gives ${name} a second time`);
    const salt = randomBytes(16);
    users.set(name, { salt, hash: hashPassword(password, salt) });
  });
  return users;
}

export class PlainUsersFile {
  private users: Map<string, HashedPassword>;

  constructor(
    readonly file: string,
    private readonly log?: Logger,
  ) {
    this.users = this.read();
  }

  private read(): Map<string, HashedPassword> {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      throw new Error(`The PLAIN users file ${this.file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); check the path and its permissions.`);
    }
    return parsePlainUsers(text, this.file);
  }

  has(user: string): boolean {
    return this.users.has(user);
  }

  check(user: string, password: string): boolean {
    const entry = this.users.get(user);
    if (!entry) return false;
    return timingSafeEqual(hashPassword(password, entry.salt), entry.hash);
  }

  watch(): () => void {
    const reload = () => {
      try {
        this.users = this.read();
        this.log?.info({ file: this.file, users: this.users.size }, 'PLAIN users reloaded');
      } catch (e) {
        this.log?.warn({ err: (e as Error).message }, 'PLAIN users file changed but does not load; keeping the previous users');
      }
    };
    watchFile(this.file, { interval: 1_000, persistent: false }, reload);
    return () => unwatchFile(this.file, reload);
  }
}
