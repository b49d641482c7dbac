import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServeError } from './serve-errors.js';

/** The page's files as `npm run build` writes them (dist/ui): the HTML shell, the bundled script and the styles. */
export interface PageAssets {
  html: string;
  script: string;
  styles: string;
}

/** rein's package directory: the nearest folder above this module whose package.json is rein's. */
export const packageRoot = (): string => {
  for (let directory = dirname(fileURLToPath(import.meta.url)); ; directory = dirname(directory)) {
    const manifest = join(directory, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'rein') return directory;
    if (dirname(directory) === directory) throw new ServeError('SERVE_ASSETS_MISSING', 'rein’s package directory was not found above its modules');
  }
};

/** The directory of the built page: `<package>/dist/ui`. */
export const defaultAssetDirectory = (): string => join(packageRoot(), 'dist', 'ui');

/** Read the built page from `directory`; `SERVE_ASSETS_MISSING` when it was not built (`npm run build`). */
export const loadPageAssets = async (directory = defaultAssetDirectory()): Promise<PageAssets> => {
  try {
    const [html, script, styles] = await Promise.all(['index.html', 'app.js', 'app.css'].map((name) => readFile(join(directory, name), 'utf8')));
    return { html: html!, script: script!, styles: styles! };
  } catch (error) {
    throw new ServeError('SERVE_ASSETS_MISSING', `the viewer page is not built in ${directory}: run npm run build`, { cause: error });
  }
};
