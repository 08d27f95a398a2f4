/**
 * Compiles one Java source against Apache Kafka's client jars (the version
 * `npm run apache-kafka` installs) once per source and Kafka version, into
 * .cache/<name>-<hash>, and answers the classpath that runs it. Several
 * processes may build at once: each builds aside and the first rename wins.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { apacheKafkaInstall } from './apache-kafka.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const built = new Map<string, Promise<string>>();

export function javaClasspath(source: string, name: string): Promise<string> {
  let classpath = built.get(source);
  if (!classpath) {
    classpath = (async () => {
      const { libs, version } = await apacheKafkaInstall();
      const hash = createHash('sha256').update(version).update(readFileSync(source)).digest('hex').slice(0, 16);
      const out = join(REPO, '.cache', `${name}-${hash}`);
      if (!existsSync(out)) {
        const partial = `${out}.${process.pid}.partial`;
        mkdirSync(partial, { recursive: true });
        await promisify(execFile)('javac', ['-nowarn', '-cp', `${libs}/*`, '-d', partial, source], { timeout: 300_000 });
        try {
          renameSync(partial, out);
        } catch {
          rmSync(partial, { recursive: true, force: true }); // another process built it first
        }
      }
      return `${out}:${libs}/*`;
    })();
    built.set(source, classpath);
  }
  return classpath;
}
