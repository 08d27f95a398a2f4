/**
 * The configuration file: YAML (.yaml, .yml) or TOML (.toml), chosen by the
 * file's extension, holding a mapping of setting names (the flag names) to
 * values. `yaml` is the YAML 1.2 parser the Node.js ecosystem keeps (it
 * refuses duplicate keys and reports where a mistake is); `smol-toml` is a
 * small TOML 1.0 parser with no dependencies. What the values mean is checked
 * by ./setting-sources.ts, the same way flags are.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './config-error.js';

const FORMATS: Record<string, { name: string; parse: (text: string) => unknown }> = {
  '.yaml': { name: 'YAML', parse: (text) => parseYaml(text, { uniqueKeys: true }) },
  '.yml': { name: 'YAML', parse: (text) => parseYaml(text, { uniqueKeys: true }) },
  '.toml': { name: 'TOML', parse: parseToml },
};

/** The file's settings by name; a file that cannot be read or parsed is one sentence saying so. */
export function readConfigFile(path: string): Record<string, unknown> {
  const format = FORMATS[extname(path).toLowerCase()];
  if (format === undefined) {
    throw new ConfigError(`The configuration file ${path} must end in .yaml, .yml or .toml: its extension says how it is read.`);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`The configuration file ${path} could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); check the path given to --config (or QUEEN_CONFIG).`);
  }
  let parsed: unknown;
  try {
    parsed = format.parse(text);
  } catch (e) {
    const first = (e as Error).message.split('\n')[0]!.trim();
    throw new ConfigError(`The configuration file ${path} is not valid ${format.name}: ${first.replace(/\.$/, '')}; correct it and start again.`);
  }
  if (parsed === null || parsed === undefined) return {}; // an empty file sets nothing
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`The configuration file ${path} must be a mapping of setting names to values, e.g. "http-port: 6632".`);
  }
  return parsed as Record<string, unknown>;
}
