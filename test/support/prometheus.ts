/**
 * Reading a /metrics page as Prometheus would: samples by name and labels.
 * Tests ask for a sum over the samples whose labels include the ones given,
 * and compare two scrapes, so series other tests in the same process moved
 * do not matter.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

export class Scrape {
  constructor(
    readonly text: string,
    readonly samples: Sample[] = parseExposition(text),
  ) {}

  /** The sum of `name`'s samples carrying every label given; 0 when there are none. */
  sum(name: string, labels: Record<string, string> = {}): number {
    return this.matching(name, labels).reduce((total, s) => total + s.value, 0);
  }

  /** Whether any sample of `name` carries every label given. */
  has(name: string, labels: Record<string, string> = {}): boolean {
    return this.matching(name, labels).length > 0;
  }

  private matching(name: string, labels: Record<string, string>): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }
}

/** GET `url` (a /metrics page) and parse it; fails with the status when it is not 200. */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 200)}`);
  if (!(response.headers.get('content-type') ?? '').startsWith('text/plain')) throw new Error(`GET ${url} answered ${response.headers.get('content-type')}, not Prometheus text`);
  return new Scrape(text);
}
