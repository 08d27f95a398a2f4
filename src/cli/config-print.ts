/**
 * `queen-gateway config print [COMMAND] [--config FILE] [flags]`: the
 * configuration a command would start with, validated as at start, as YAML
 * (so it can be saved as a configuration file once the masked secrets are
 * filled in), each value with where it came from. Secrets are masked: the RPC
 * secret, passwords inside URLs, and librdkafka options that carry passwords,
 * secrets or keys.
 */
import { Document, isCollection, isMap, isNode } from 'yaml';
import { bridgeScope } from './bridge-settings.js';
import { readSettings, type Origin, type SettingsRead, type SettingValue } from './setting-sources.js';
import { EVERY_FLAG, readBridgeSettings, resolveConfig, settingsOf, type Command } from './settings.js';

const MASK = '********';
/** Settings whose whole value is a secret. */
const SECRET_SETTINGS = new Set(['rpc-secret', 'encryption-key']);
/** librdkafka options (--source-option, --target-option) whose value is a secret. */
const SECRET_OPTION = /password|secret|jaas|token|\.pem$|oauthbearer\.config/i;

/** A URL's password replaced by the mask; any other text as it is. */
function maskUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // A PostgreSQL URL naming several servers (h1:5432,h2:5432) is no WHATWG URL; its password is masked all the same.
    return text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/i, `$1:${MASK}@`);
  }
  if (url.password === '') return text;
  url.password = MASK;
  return url.toString();
}

function masked(flag: string, value: SettingValue): SettingValue {
  if (SECRET_SETTINGS.has(flag)) return MASK;
  if (typeof value === 'string') return maskUrl(value);
  if (Array.isArray(value)) return value.map(maskUrl);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_OPTION.test(k) ? MASK : v]));
  return value;
}

function describeOrigin(origin: Origin): string {
  switch (origin.from) {
    case 'flag':
      return ' flag';
    case 'environment':
      return ` environment ${origin.variable}`;
    case 'file':
      return ` file ${origin.path}`;
    case 'default':
      return ' default';
  }
}

function readOf(command: Command, argv: readonly string[], env: NodeJS.ProcessEnv): SettingsRead {
  if (command !== 'bridge') return resolveConfig(argv, env, command).read;
  readBridgeSettings(argv, env); // validated as at start
  return readSettings(bridgeScope(EVERY_FLAG), argv, env);
}

export function printConfig(command: Command, argv: readonly string[], env: NodeJS.ProcessEnv): string {
  const read = readOf(command, argv, env);
  const defs = settingsOf(command);
  const doc = new Document(Object.fromEntries(defs.filter((d) => read.values.has(d.flag)).map((d) => [d.flag, masked(d.flag, read.values.get(d.flag)!)])));
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      const flag = String(isNode(pair.key) ? (pair.key as { value: unknown }).value : pair.key);
      if (!isNode(pair.value)) continue;
      // Lists and option mappings on one line, so the source comment sits beside them as beside a scalar.
      if (isCollection(pair.value)) pair.value.flow = true;
      pair.value.comment = describeOrigin(read.origins.get(flag)!);
    }
  }
  doc.commentBefore = [
    ` queen-gateway ${command}: the effective configuration, secrets masked.`,
    ` Precedence: flags > environment (QUEEN_*) > configuration file${read.file === undefined ? ' (none given)' : ` (${read.file})`} > defaults;`,
    ' each line says where its value came from.',
  ].join('\n');
  const unset = defs.filter((d) => !read.values.has(d.flag)).map((d) => d.flag);
  if (unset.length > 0) doc.comment = ` Not set (no default): ${unset.join(', ')}`;
  const text = doc.toString({ lineWidth: 0 });
  return text.endsWith('\n') ? text : `${text}\n`;
}
