import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/*
 * `npm run build`, last step: bundle the viewer page (ui/, Preact) into dist/ui — index.html, app.js, app.css — which
 * `rein serve` serves and `rein export --html` inlines. Everything the page runs is in these files: no CDN, no font,
 * nothing fetched from outside the server that serves it.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));

export const bundleUi = async (): Promise<void> => {
  const outdir = join(root, 'dist/ui');
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: { app: join(root, 'ui/main.tsx') },
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
    legalComments: 'none',
  });
  await writeFile(join(outdir, 'app.css'), await readFile(join(root, 'ui/app.css'), 'utf8'));
  await writeFile(join(outdir, 'index.html'), await readFile(join(root, 'ui/index.html'), 'utf8'));
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleUi();
