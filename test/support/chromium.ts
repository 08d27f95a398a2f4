/**
 * Debian's chromium, headless, driven by playwright-core, for the web
 * console's tests: a fresh profile each time, nothing fetched from the
 * network but the page under test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface HeadlessChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(viewport = { width: 1280, height: 800 }): Promise<HeadlessChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'queen-console-chromium-'));
  // --headless comes from `headless: true`; the profile directory is the fresh --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
