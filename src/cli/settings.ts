/**
 * Every setting of `serve`, `core` and `gateway`, declared once: its flag, its
 * environment variable (QUEEN_ + the flag in upper snake case, derived, so the
 * two cannot drift), its key in a configuration file (the flag's name), its
 * type, default and bounds. Precedence: flags > environment > file >
 * defaults (./setting-sources.ts reads them; the bridge's own table is
 * ./bridge-settings.ts). Validation happens before anything starts; a bad
 * value is one sentence saying what to fix, raised as a ConfigError.
 */
import { BRIDGE_SETTINGS, readBridgeConfig, type BridgeConfig } from './bridge-settings.js';
import { checkCombinations, checkSplitLayout, RPC_TLS_FLAGS } from './setting-checks.js';
import { camelCase, precedenceLines, readSettings, settingLines, type SettingDef, type SettingsRead, type SettingsScope } from './setting-sources.js';
import { COMMANDS, SETTINGS, type Command, type ServeConfig } from './settings-table.js';

export { ConfigError } from './config-error.js';
export { checkRpcAuthentication, listenersOf, RPC_TLS_FLAGS, saslMechanismsOf } from './setting-checks.js';
export { envName, LOG_LEVELS } from './setting-sources.js';
export { COMMANDS, SETTINGS, type Command, type ServeConfig } from './settings-table.js';

/** `queen-gateway config print`: not a service, so not in COMMANDS. */
export const CONFIG_PRINT = 'config print [COMMAND] [--config FILE] [flags]: the effective configuration of a command (default serve) as YAML, with where each value came from and secrets masked';

/** The core's limits on connections that have not authenticated yet. */
const RPC_HANDSHAKE_FLAGS: readonly string[] = ['rpc-handshake-timeout-ms', 'rpc-max-unauthenticated'];
const SPLIT_LAYOUT_FLAGS: readonly string[] = ['rpc-host', 'rpc-port', 'rpc-socket', 'rpc-secret', 'core', 'rpc-call-timeout-ms', ...RPC_TLS_FLAGS, ...RPC_HANDSHAKE_FLAGS];
const STORAGE_AND_GROUP_FLAGS: readonly string[] = [
  'engine',
  'database-url',
  'database-schema',
  'database-pool-size',
  'database-connect-timeout-ms',
  'database-wait-ms',
  'database-statement-timeout-ms',
  'memory-max-bytes',
  'group-initial-rebalance-delay-ms',
  'group-min-session-timeout-ms',
  'group-max-session-timeout-ms',
  'group-max-size',
  'group-consumer-heartbeat-interval-ms',
  'group-consumer-session-timeout-ms',
  'coordinator-lease-ms',
  'max-inflated-batch-bytes',
  'max-inflated-request-bytes',
];
const CORE_FLAGS: readonly string[] = [...STORAGE_AND_GROUP_FLAGS, 'rpc-host', 'rpc-port', 'rpc-socket', 'rpc-secret', ...RPC_TLS_FLAGS, ...RPC_HANDSHAKE_FLAGS, 'shutdown-grace-ms', 'log-level', 'redis-url', 'redis-key-prefix', 'cross-node-wakeups', 'metrics-host', 'metrics-port', 'health-timeout-ms'];
const NOT_GATEWAY_FLAGS: readonly string[] = [...STORAGE_AND_GROUP_FLAGS, 'rpc-host', 'rpc-port', 'rpc-socket', ...RPC_HANDSHAKE_FLAGS, 'cross-node-wakeups'];

/** Whether `command` takes the setting: serve all but the split layout's, core its short list, gateway all but storage and groups. */
export function takesSetting(command: Command, flag: string): boolean {
  switch (command) {
    case 'serve':
      return !SPLIT_LAYOUT_FLAGS.includes(flag);
    case 'core':
      return CORE_FLAGS.includes(flag);
    case 'gateway':
      return !NOT_GATEWAY_FLAGS.includes(flag);
    case 'bridge':
      return BRIDGE_SETTINGS.some((d) => d.flag === flag); // its table is its own (./bridge-settings.ts)
  }
}

/** Every setting's name, of every command: what the environment and a configuration file may hold. */
export const EVERY_FLAG: ReadonlySet<string> = new Set([...SETTINGS, ...BRIDGE_SETTINGS].map((d) => d.flag));

/** The settings a command takes, in table order. */
export function settingsOf(command: Command): readonly SettingDef[] {
  if (command === 'bridge') return BRIDGE_SETTINGS;
  return (SETTINGS as readonly SettingDef[]).filter((d) => takesSetting(command, d.flag));
}

function scopeOf(command: Command): SettingsScope {
  return { command, taken: settingsOf(command), everyFlag: EVERY_FLAG };
}

/** A serve, core or gateway command's settings, validated, with where each came from. */
export function resolveConfig(argv: readonly string[], env: NodeJS.ProcessEnv, command: Command = 'serve'): { config: ServeConfig; read: SettingsRead } {
  if (command === 'bridge') throw new Error('The bridge has its own settings: read them with readBridgeSettings.');
  const read = readSettings(scopeOf(command), argv, env);
  const config: Record<string, unknown> = {};
  for (const def of SETTINGS as readonly SettingDef[]) config[camelCase(def.flag)] = read.values.get(def.flag) ?? (takesSetting(command, def.flag) ? undefined : def.default);
  checkSplitLayout(command, config as ServeConfig);
  return { config: checkCombinations(config as ServeConfig, command), read };
}

/** Reads flags over the environment over the configuration file (--config or QUEEN_CONFIG) over the defaults. */
export function readConfig(argv: readonly string[], env: NodeJS.ProcessEnv, command: Command = 'serve'): ServeConfig {
  return resolveConfig(argv, env, command).config;
}

/** The bridge's settings (./bridge-settings.ts), knowing every other command's names. */
export function readBridgeSettings(argv: readonly string[], env: NodeJS.ProcessEnv): BridgeConfig {
  return readBridgeConfig(argv, env, EVERY_FLAG);
}

export function helpText(command: Command = 'serve'): string {
  const usage = command === 'bridge'
    ? 'Usage: queen-gateway bridge --source BROKERS --topics PATTERN [--groups PATTERN] (--core HOST:PORT | --engine postgres --database-url URL | --to-kafka BROKERS) [flags]'
    : `Usage: queen-gateway ${command} [flags]`;
  const about = command === 'bridge'
    ? [
        "bridge: copies a Kafka cluster's topics (offset for offset) and consumer-group offsets into the Queen core, and keeps them in step until stopped (SIGINT/SIGTERM).",
        'With --to-kafka it runs in reverse, for a rollback: from a gateway to Apache Kafka, exactly once through Kafka transactions, offsets translated (Kafka cannot keep them).',
      ]
    : [`${command}: ${COMMANDS[command]}.`];
  const others = Object.keys(COMMANDS).filter((c) => c !== command);
  return [usage, '', ...about, `Other commands: ${others.join(', ')}; queen-gateway ${CONFIG_PRINT.split(':')[0]}.`, '', ...precedenceLines(), '', ...settingLines(settingsOf(command))].join('\n');
}

/** `queen-gateway --help`: the commands, and where each one's flags are listed. */
export function overviewText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'Usage: queen-gateway [command] [flags]',
    '',
    'A Kafka-protocol gateway over the Queen core. Commands:',
    ...Object.entries(COMMANDS).map(([name, what]) => `  ${name.padEnd(width)}  ${what}${name === 'serve' ? ' (the default)' : ''}`),
    '',
    'queen-gateway <command> --help   the flags of one command (each also an environment variable and a configuration file key)',
    `queen-gateway ${CONFIG_PRINT}`,
    'queen-gateway --version          the version',
  ].join('\n');
}
