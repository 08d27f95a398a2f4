/**
 * The settings as Markdown tables, for docs/configuration.md: generated from
 * the tables themselves (./settings.ts, ./bridge-settings.ts), and a test
 * compares the document with this, so the reference cannot drift.
 */
import { BRIDGE_SETTINGS } from './bridge-settings.js';
import { envName, type SettingDef } from './setting-sources.js';
import { COMMANDS, SETTINGS, takesSetting, type Command } from './settings.js';

function typeOf(def: SettingDef): string {
  const { kind } = def;
  switch (kind.type) {
    case 'int':
      return `whole number, ${kind.min} to ${kind.max}`;
    case 'bool':
      return 'true or false';
    case 'choice':
      return `one of ${kind.choices.join(', ')}`;
    case 'list':
      return 'list (array; comma-separated in the environment; flag repeatable)';
    case 'pairs':
      return 'KEY=VALUE (mapping; comma-separated in the environment; flag repeatable)';
    case 'string':
      return 'text';
  }
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function row(def: SettingDef, commands: string | null): string {
  const shown = def.defaultText ?? (def.default === undefined ? '' : `\`${def.default}\``);
  return `| \`${def.flag}\` | \`${envName(def.flag)}\` | ${cell(typeOf(def))} | ${cell(shown)} |${commands === null ? '' : ` ${commands} |`} ${cell(def.help)} |`;
}

/** The reference: serve, core and gateway's settings with the commands that take each; then the bridge's. */
export function settingsReference(): string {
  const services = Object.keys(COMMANDS).filter((c) => c !== 'bridge') as Command[];
  return [
    '| key / flag | environment | value | default | commands | meaning |',
    '| --- | --- | --- | --- | --- | --- |',
    ...(SETTINGS as readonly SettingDef[]).map((def) => row(def, services.filter((c) => takesSetting(c, def.flag)).join(', '))),
    '',
    'The bridge (`queen-gateway bridge`):',
    '',
    '| key / flag | environment | value | default | meaning |',
    '| --- | --- | --- | --- | --- |',
    ...(BRIDGE_SETTINGS as readonly SettingDef[]).map((def) => row(def, null)),
  ].join('\n');
}
