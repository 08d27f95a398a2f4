/**
 * Where a setting's value comes from, read the same way for every command:
 * flags, then QUEEN_* environment variables, then a configuration file (YAML
 * or TOML, ./config-file.ts), then the table's default. Each source is checked
 * against the same table (./settings.ts for serve, core and gateway;
 * ./bridge-settings.ts for the bridge) with the same bounds and the same
 * sentences, naming the source: "The flag --port", "The environment variable
 * QUEEN_PORT", "The setting "port" in /etc/queen.yaml". A name that is no
 * setting of any command is refused with the closest valid one.
 */
import { ConfigError } from './config-error.js';
import { readConfigFile } from './config-file.js';

export { ConfigError };

export type Kind =
  | { type: 'string' }
  | { type: 'int'; min: number; max: number }
  | { type: 'bool' }
  | { type: 'choice'; choices: readonly string[] }
  /** Repeatable flag; in the environment, comma-separated; in a file, an array. */
  | { type: 'list' }
  /** Repeatable KEY=VALUE flag (librdkafka settings); in the environment, comma-separated; in a file, a mapping. */
  | { type: 'pairs' };

export interface SettingDef {
  flag: string;
  kind: Kind;
  default?: string | number | boolean;
  /** How the documentation states a default that depends on the machine (the memory engine's limit). */
  defaultText?: string;
  help: string;
  /** What the value looks like in help and in "needs a value" (e.g. BROKERS); default <value>. */
  value?: string;
}

export type SettingValue = string | number | boolean | string[] | Record<string, string>;

/** Where a value came from, for `config print`. */
export type Origin = { from: 'flag' } | { from: 'environment'; variable: string } | { from: 'file'; path: string } | { from: 'default' };

/** What one command takes, and how it words the flags it does not. */
export interface SettingsScope {
  /** "serve", "core", "gateway", "bridge": how sentences name the command. */
  command: string;
  /** The settings this command takes. */
  taken: readonly SettingDef[];
  /** Every setting of every command: another command's is ignored in the environment and a file, refused as a flag. */
  everyFlag: ReadonlySet<string>;
  /** A flag given twice is refused (the bridge), instead of the last one winning. */
  refuseRepeats?: boolean;
  /** The sentence for a flag that is no setting of this command; default the serve commands' wording. */
  unknownFlag?: (name: string, nearest: string | undefined) => string;
}

export interface SettingsRead {
  values: Map<string, SettingValue>;
  origins: Map<string, Origin>;
  /** The configuration file read, if any. */
  file: string | undefined;
}

export const CONFIG_FLAG = 'config';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const ENV_PREFIX = 'QUEEN_';

export function envName(flag: string): string {
  return `${ENV_PREFIX}${flag.toUpperCase().replace(/-/g, '_')}`;
}

export function camelCase(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/** The candidate closest to `name`, when it is close enough to be a typing mistake (a third of its length, at least 2). */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const candidate of candidates) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || d < best.d) best = { name: candidate, d };
  }
  return best !== undefined && best.d <= Math.max(2, Math.floor(name.length / 3)) ? best.name : undefined;
}

function valuePlaceholder(def: SettingDef): string {
  return def.value ?? '<value>';
}

/**
 * One value as the table says it must be; `source` starts the sentence ("The
 * flag --port"). A list or KEY=VALUE pairs in the environment are
 * comma-separated; a flag holds one item (`whole`), as a librdkafka value may
 * hold commas itself.
 */
export function parseValue(def: SettingDef, raw: string, source: string, whole = false): SettingValue {
  const { kind } = def;
  switch (kind.type) {
    case 'list':
    case 'pairs': {
      const items = whole && kind.type === 'pairs' ? [raw] : raw.split(',').map((item) => item.trim());
      if (items.some((item) => item === '')) throw new ConfigError(`${source} has an empty item; give each value once, e.g. ${source.startsWith('The flag') ? `--${def.flag} A --${def.flag} B` : 'A,B'}.`);
      return kind.type === 'list' ? items : pairsOf(items, source);
    }
    case 'string':
      if (raw.trim() === '') throw new ConfigError(`${source} is empty; give it a value or leave it out.`);
      return raw;
    case 'int': {
      const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n) || n < kind.min || n > kind.max) {
        throw new ConfigError(`${source} must be a whole number from ${kind.min} to ${kind.max}; got ${JSON.stringify(raw)}.`);
      }
      return n;
    }
    case 'bool':
      if (/^(true|1|yes|on)$/i.test(raw)) return true;
      if (/^(false|0|no|off)$/i.test(raw)) return false;
      throw new ConfigError(`${source} must be true or false; got ${JSON.stringify(raw)}.`);
    case 'choice':
      if (!kind.choices.includes(raw)) {
        throw new ConfigError(`${source} must be one of ${kind.choices.join(', ')}; got ${JSON.stringify(raw)}.`);
      }
      return raw;
  }
}

function pairsOf(items: readonly string[], source: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf('=');
    if (at <= 0) throw new ConfigError(`${source} takes KEY=VALUE, a librdkafka setting such as security.protocol=ssl; got ${JSON.stringify(item)}.`);
    pairs[item.slice(0, at).trim()] = item.slice(at + 1);
  }
  return pairs;
}

/** A value from a YAML or TOML file, checked as the text a flag would carry, so one parser checks both. */
function fileValue(def: SettingDef, value: unknown, source: string): SettingValue {
  const scalar = (v: unknown): string => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
    throw new ConfigError(`${source} must be ${def.kind.type === 'list' || def.kind.type === 'pairs' ? 'a list of single values' : 'a single value'}; got ${Array.isArray(v) ? 'a list' : 'a mapping'}.`);
  };
  const repeatable = def.kind.type === 'list' || def.kind.type === 'pairs';
  if (def.kind.type === 'pairs' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return pairsOf(Object.entries(value).map(([k, v]) => `${k}=${scalar(v)}`), source);
  }
  if (!Array.isArray(value)) return parseValue(def, scalar(value), source);
  if (!repeatable) throw new ConfigError(`${source} must be a single value; got a list.`);
  const items = value.map(scalar);
  if (items.some((item) => item.trim() === '')) throw new ConfigError(`${source} has an empty item; give each value once.`);
  return def.kind.type === 'list' ? items : pairsOf(items, source);
}

/** The file named by --config (or --config=FILE) or QUEEN_CONFIG, and the flags without it. */
function configFileOf(argv: readonly string[], env: NodeJS.ProcessEnv): { file: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let file: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === `--${CONFIG_FLAG}` || arg.startsWith(`--${CONFIG_FLAG}=`)) {
      const given = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (given === undefined || given.trim() === '') throw new ConfigError(`The flag --${CONFIG_FLAG} needs a file, e.g. --${CONFIG_FLAG} /etc/queen-gateway.yaml.`);
      if (file !== undefined) throw new ConfigError(`The flag --${CONFIG_FLAG} is given twice; give one configuration file.`);
      file = given;
    } else rest.push(arg);
  }
  const fromEnv = env[envName(CONFIG_FLAG)];
  return { file: file ?? (fromEnv === undefined || fromEnv === '' ? undefined : fromEnv), rest };
}

/** Refuses QUEEN_* variables that are no setting of any command: a misspelt one would otherwise be ignored without a word. */
function checkEnvironmentNames(scope: SettingsScope, env: NodeJS.ProcessEnv): void {
  const known = new Map([...scope.everyFlag, CONFIG_FLAG].map((flag) => [envName(flag), flag]));
  for (const variable of Object.keys(env)) {
    if (!variable.startsWith(ENV_PREFIX) || known.has(variable)) continue;
    const near = nearestName(variable, known.keys());
    throw new ConfigError(
      near !== undefined
        ? `Unknown setting ${variable} in the environment; did you mean ${near}?`
        : `Unknown setting ${variable} in the environment: every ${ENV_PREFIX}* variable must name a setting; correct it or unset it (run "queen-gateway ${scope.command} --help" to see them).`,
    );
  }
}

/** Reads one command's settings from its flags, the environment, its configuration file and the table's defaults. */
export function readSettings(scope: SettingsScope, argv: readonly string[], env: NodeJS.ProcessEnv): SettingsRead {
  const defs = new Map<string, SettingDef>(scope.taken.map((d) => [d.flag, d]));
  const values = new Map<string, SettingValue>();
  const origins = new Map<string, Origin>();
  const { file, rest } = configFileOf(argv, env);
  checkEnvironmentNames(scope, env);

  if (file !== undefined) {
    for (const [name, value] of Object.entries(readConfigFile(file))) {
      const def = defs.get(name);
      if (def === undefined) {
        if (scope.everyFlag.has(name)) continue; // another command's setting: one file may serve several commands
        const near = nearestName(name, scope.everyFlag);
        throw new ConfigError(
          near !== undefined
            ? `Unknown setting "${name}" in ${file}; did you mean "${near}"?`
            : `Unknown setting "${name}" in ${file}: a configuration file's keys are the flag names without "--" (run "queen-gateway ${scope.command} --help" to see them).`,
        );
      }
      values.set(name, fileValue(def, value, `The setting "${name}" in ${file}`));
      origins.set(name, { from: 'file', path: file });
    }
  }

  for (const def of scope.taken) {
    const raw = env[envName(def.flag)];
    if (raw === undefined || raw === '') continue;
    values.set(def.flag, parseValue(def, raw, `The environment variable ${envName(def.flag)}`));
    origins.set(def.flag, { from: 'environment', variable: envName(def.flag) });
  }

  readFlags(scope, defs, rest, values, origins);
  for (const def of scope.taken) {
    if (def.default === undefined || values.has(def.flag)) continue;
    values.set(def.flag, def.default);
    origins.set(def.flag, { from: 'default' });
  }
  return { values, origins, file };
}

/** Flags: `--name value`, `--name=value`, `--flag`/`--no-flag` for switches; they win over everything else. */
function readFlags(scope: SettingsScope, defs: ReadonlyMap<string, SettingDef>, argv: readonly string[], values: Map<string, SettingValue>, origins: Map<string, Origin>): void {
  const flagged = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`Unexpected argument ${JSON.stringify(arg)}; settings are given as --name value (see queen-gateway ${scope.command} --help).`);
    const eq = arg.indexOf('=');
    let name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    let inline: string | undefined = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (!defs.has(name) && name.startsWith('no-') && defs.get(name.slice(3))?.kind.type === 'bool' && inline === undefined) {
      name = name.slice(3);
      inline = 'false';
    }
    const def = defs.get(name);
    if (!def) {
      const nearest = nearestName(name, defs.keys());
      if (scope.unknownFlag) throw new ConfigError(scope.unknownFlag(name, nearest));
      if (scope.everyFlag.has(name)) {
        throw new ConfigError(`The flag --${name} is not a setting of "queen-gateway ${scope.command}"; run "queen-gateway ${scope.command} --help" to see its flags.`);
      }
      const help = `"queen-gateway ${scope.command} --help" to see the flags.`;
      throw new ConfigError(nearest === undefined ? `Unknown flag --${name}; run ${help}` : `Unknown flag --${name}; did you mean --${nearest}? Run ${help}`);
    }
    let raw = inline;
    if (raw === undefined) {
      if (def.kind.type === 'bool') raw = 'true';
      else {
        raw = argv[++i];
        if (raw === undefined) throw new ConfigError(`The flag --${name} needs a value, e.g. --${name} ${valuePlaceholder(def)}.`);
      }
    }
    const repeatable = def.kind.type === 'list' || def.kind.type === 'pairs';
    if (scope.refuseRepeats && !repeatable && flagged.has(name)) throw new ConfigError(`The flag --${name} is given twice; give it once.`);
    const value = parseValue(def, raw, `The flag --${name}`, true);
    // A repeated list flag adds to what the flags gave so far (the environment's and the file's value is replaced).
    const earlier = repeatable && flagged.has(name) ? values.get(name) : undefined;
    values.set(name, Array.isArray(value) ? [...((earlier as string[] | undefined) ?? []), ...value] : typeof value === 'object' ? { ...(earlier as Record<string, string> | undefined), ...value } : value);
    origins.set(name, { from: 'flag' });
    flagged.add(name);
  }
}

/** Each setting's help line: flag (and what its value looks like), environment variable, help, default. */
export function settingLines(defs: readonly SettingDef[]): string[] {
  return defs.map((def) => {
    const shown = def.default === undefined ? '' : ` (default ${def.default})`;
    const flag = def.value === undefined ? def.flag : `${def.flag} ${def.value}`;
    return `  --${flag.padEnd(20)} ${envName(def.flag).padEnd(30)} ${def.help}${shown}`;
  });
}

/** How --help states where values come from. */
export function precedenceLines(): string[] {
  return [
    `Precedence: flags > environment variables (${ENV_PREFIX}*) > configuration file > defaults.`,
    `  --${`${CONFIG_FLAG} FILE`.padEnd(20)} ${envName(CONFIG_FLAG).padEnd(30)} a YAML (.yaml, .yml) or TOML (.toml) file of settings: keys are the flag names (http-port: 6632), lists are arrays`,
  ];
}
