/**
 * The repository's Dockerfile, read as instructions, so a test can perform
 * the same build without a Docker engine (test/setup/image-build.test.ts).
 * It understands what that file uses: FROM ... AS, WORKDIR, COPY (with
 * --from), RUN and CMD/HEALTHCHECK in JSON form, ENV key=value, USER and
 * EXPOSE, one instruction a line. Anything else is refused with a sentence,
 * so the file cannot grow a step the test would silently skip.
 */
import { readFileSync } from 'node:fs';

export interface CopyStep {
  /** The stage copied from (--from), or undefined for the build context. */
  from?: string;
  sources: string[];
  destination: string;
}

export interface Stage {
  image: string;
  name?: string;
  workdir: string;
  /** COPY and RUN in file order: what builds the stage's files. */
  steps: ({ copy: CopyStep } | { run: string })[];
  env: Record<string, string>;
  user?: string;
  exposed: number[];
  healthcheck?: string[];
  cmd?: string[];
}

const KNOWN = new Set(['FROM', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'USER', 'EXPOSE', 'HEALTHCHECK', 'CMD']);

function jsonWords(text: string, where: string): string[] {
  try {
    const words = JSON.parse(text) as unknown;
    if (Array.isArray(words) && words.every((w) => typeof w === 'string')) return words;
  } catch {
    // reported below
  }
  throw new Error(`${where}: write it in JSON form (["node", ...]) so it runs without a shell, as the test runs it.`);
}

export function parseDockerfile(path: string): Stage[] {
  const stages: Stage[] = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${path}:${index + 1}`;
    if (line.endsWith('\\')) throw new Error(`${where}: keep each instruction on one line; the build test reads the file line by line.`);
    const [keyword, ...rest] = line.split(/\s+/);
    const instruction = keyword!.toUpperCase();
    const argument = line.slice(keyword!.length).trim();
    if (!KNOWN.has(instruction)) throw new Error(`${where}: ${instruction} is not an instruction the build test performs; teach test/support/dockerfile.ts it first.`);
    if (instruction === 'FROM') {
      stages.push({ image: rest[0]!, name: rest[1]?.toUpperCase() === 'AS' ? rest[2] : undefined, workdir: '/', steps: [], env: {}, exposed: [] });
      return;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${where}: ${instruction} comes before the first FROM.`);
    switch (instruction) {
      case 'WORKDIR':
        stage.workdir = argument;
        break;
      case 'COPY': {
        const from = rest[0]?.startsWith('--from=') ? rest.shift()!.slice('--from='.length) : undefined;
        if (rest.some((w) => w.startsWith('--'))) throw new Error(`${where}: COPY takes only --from here.`);
        stage.steps.push({ copy: { from, sources: rest.slice(0, -1), destination: rest.at(-1)! } });
        break;
      }
      case 'RUN':
        stage.steps.push({ run: argument });
        break;
      case 'ENV':
        for (const pair of rest) {
          const [key, value] = pair.split(/=(.*)/s, 2);
          if (value === undefined) throw new Error(`${where}: write ENV as KEY=value.`);
          stage.env[key!] = value;
        }
        break;
      case 'USER':
        stage.user = argument;
        break;
      case 'EXPOSE':
        stage.exposed.push(...rest.map(Number));
        break;
      case 'HEALTHCHECK':
        stage.healthcheck = jsonWords(argument.slice(argument.indexOf('CMD ') + 4), where);
        break;
      case 'CMD':
        stage.cmd = jsonWords(argument, where);
        break;
    }
  });
  return stages;
}
