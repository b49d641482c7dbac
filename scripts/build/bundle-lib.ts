import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleOnly, bundleOptions, msgpackrWithoutExtractor, root } from './bundle-options.js';

/*
 * `npm run build`, third part: bundle the library's two doors (`rein`, `rein/testing`) into dist/lib, one entry file
 * each plus shared chunks, so a class is one class whichever door it came through. `import 'rein'` used to resolve,
 * read and compile ~700 files (355 of rein's own, 223 of rxjs's CommonJS build); Node's per-file cost was most of it.
 *
 * Bundled with rein's code: rxjs (its ES module build), zod (95 files) and xstate (its ES module build; the package's
 * `import` condition is a wrapper around its CommonJS build, which Node lexes on every start). Both are built to
 * meet copies of themselves: zod's `instanceof` checks the schema's traits and its registry (`.describe()`, `.meta()`)
 * lives on globalThis, so a host's own zod schemas work with rein's; an xstate actor drives a machine through its
 * methods, so a host's `createActor` runs rein's exported machines. msgpackr is bundled without its optional native
 * string extractor, as in the CLI (finding it costs ~20 files and a native addon at start-up; the values are the same). Every other package stays an ordinary import
 * resolved from node_modules: native addons and the optional packages (pg, OpenTelemetry, the MCP SDK, classic-level,
 * yaml, tinyglobby, hash-wasm, ignore) are imported where rein uses them.
 */

/** Packages bundled into the library. */
const bundled = new Set(['rxjs', 'tslib', 'zod', 'xstate', 'msgpackr']);

export const bundleLibrary = async (): Promise<void> => {
  const outdir = join(root, 'dist/lib');
  await rm(outdir, { recursive: true, force: true });
  await build(bundleOptions({ index: join(root, 'dist/src/index.js'), testing: join(root, 'dist/src/testing/index.js') }, outdir, [bundleOnly(bundled), msgpackrWithoutExtractor]));
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleLibrary();
