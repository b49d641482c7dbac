import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { renderReference } from './reference.js';

/** `npm run docs`: writes the generated reference pages under docs/reference (run from the package root). */
const root = process.cwd();
for (const [path, text] of Object.entries(await renderReference(root))) {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
  console.log(`wrote ${path}`);
}
