/**
 * docs/configuration.md's reference of every setting is the settings tables
 * themselves: the section between its markers must be what
 * settingsReference() generates from src/cli/settings.ts and
 * src/cli/bridge-settings.ts, so a setting added, renamed or re-bounded
 * without the documentation fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settingsReference } from '../../src/cli/settings-reference.js';
import { BRIDGE_SETTINGS } from '../../src/cli/bridge-settings.js';
import { SETTINGS } from '../../src/cli/settings.js';

const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

describe('docs/configuration.md', () => {
  it('lists every setting as the tables declare it', () => {
    const section = doc.match(/<!-- settings:start -->\n([\s\S]*?)\n<!-- settings:end -->/);
    expect(section, 'docs/configuration.md has the settings markers').not.toBeNull();
    expect(section![1]).toBe(settingsReference());
    for (const { flag } of [...SETTINGS, ...BRIDGE_SETTINGS]) expect(section![1]).toContain(`| \`${flag}\` |`);
  });

  it('documents the file, the precedence, config print, and the lifecycle', () => {
    for (const heading of ['## The configuration file', '## Precedence', '## `config print`', '### Starting, and waiting for the database', '### Stopping: signals and the shutdown order', '### `/health` and `/ready`']) {
      expect(doc).toContain(`\n${heading}\n`);
    }
    expect(doc).toContain('**flags > environment > file > defaults.**');
  });
});
