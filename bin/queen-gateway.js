#!/usr/bin/env node
// Runs the queen-gateway CLI. In a checkout with the dev dependencies (src/
// present and tsx installed) it runs the TypeScript source through tsx, so an
// edit is live and an old build can never shadow it; an installed package
// (npm pack, or a checkout after `npm run build` and `npm prune --omit=dev`)
// runs the build in dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/src/cli/main.js', import.meta.url);

async function loadTsx() {
  if (!existsSync(fileURLToPath(source))) return null;
  try {
    return await import('tsx/esm/api');
  } catch {
    return null; // a production install: no dev dependencies
  }
}

const tsx = await loadTsx();
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (existsSync(fileURLToPath(compiled))) {
  await import(compiled.href);
} else {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(
    `queen-gateway is not built and its dev dependencies are not installed, so there is nothing to run. ` +
      `In ${root} run "npm install" (to run from source) or "npm ci && npm run build && npm prune --omit=dev" (for a production install).\n`,
  );
  process.exit(2);
}
