/**
 * Queen's official JavaScript client (queen-mq, clients/client-js in the
 * queen-mq/queen repository), fetched at test time from a git snapshot into
 * .tmp/ (ignored by git, never committed) and imported from there. The
 * snapshot is a bare git directory: QUEEN_REPO_GIT, else the machine's mirror.
 * Its one npm dependency that the client's modules import, `uuid` (for v7
 * ids), is stood in for by a few lines written here, so nothing is installed.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEFAULT_SNAPSHOT = '/work/.mirror/queen-mq+queen/repo';

// A UUIDv7: 48 bits of milliseconds, then random bits with the version and variant set.
const UUID_V7 = `import { randomBytes } from 'node:crypto'
export function v7() {
  const b = randomBytes(16)
  b.writeUIntBE(Date.now(), 0, 6)
  b[6] = (b[6] & 0x0f) | 0x70
  b[8] = (b[8] & 0x3f) | 0x80
  const h = b.toString('hex')
  return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20)
}
`;

export type QueenJsClient = { module: Record<string, any>; commit: string } | { skipReason: string };

/** The client's index module (Queen, Stream, ...), or why it cannot be had. */
export async function loadQueenJsClient(): Promise<QueenJsClient> {
  const gitDir = process.env.QUEEN_REPO_GIT ?? DEFAULT_SNAPSHOT;
  if (!existsSync(gitDir)) return { skipReason: `no queen-mq/queen snapshot at ${gitDir} (set QUEEN_REPO_GIT to a git directory of it)` };
  let commit: string;
  try {
    commit = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch (e) {
    return { skipReason: `${gitDir} is not a readable git directory: ${(e as Error).message}` };
  }
  const dir = join(REPO, '.tmp', `queen-mq-${commit.slice(0, 12)}`);
  if (!existsSync(join(dir, 'clients', 'client-js', 'client-v2', 'index.js'))) extract(gitDir, commit, dir);
  const module = await import(pathToFileURL(join(dir, 'clients', 'client-js', 'client-v2', 'index.js')).href);
  return { module, commit };
}

/** Extracts the client into a scratch directory, then moves it into place, so a half-extracted copy is never used. */
function extract(gitDir: string, commit: string, dir: string): void {
  const scratch = `${dir}.${process.pid}-${randomBytes(3).toString('hex')}`;
  mkdirSync(scratch, { recursive: true });
  const archive = execFileSync('git', ['--git-dir', gitDir, 'archive', commit, 'clients/client-js/client-v2', 'clients/client-js/package.json'], { maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  execFileSync('tar', ['-x', '-C', scratch], { input: archive });
  const uuid = join(scratch, 'clients', 'client-js', 'node_modules', 'uuid');
  mkdirSync(uuid, { recursive: true });
  writeFileSync(join(uuid, 'package.json'), JSON.stringify({ name: 'uuid', type: 'module', exports: './index.js' }));
  writeFileSync(join(uuid, 'index.js'), UUID_V7);
  try {
    renameSync(scratch, dir);
  } catch {
    rmSync(scratch, { recursive: true, force: true }); // another run put it there first
  }
}
