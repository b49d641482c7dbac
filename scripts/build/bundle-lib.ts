import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
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

/**
 * The library's areas (src/areas/*.area.ts, loaded by `import()` on a lazy export's first call) and `rein/testing`
 * each read the `rein` door as a side effect here, in the bundle only. esbuild puts a module in a chunk per set of
 * entries that reach it; with every entry reaching all of the door's code, that code is ONE chunk, and each area one
 * chunk of what only it uses, instead of ~25 small chunks split by which area also needs a module (a file costs
 * Node a resolve, a read and a compile of its own). At run time the door is already loaded when an area is.
 */
const oneDoorChunk = (door: string): Plugin => ({
  name: 'rein-one-door-chunk',
  setup(context) {
    context.onLoad({ filter: /[\\/]dist[\\/]src[\\/](areas[\\/][^\\/]+\.area|testing[\\/]index)\.js$/ }, async (args) => ({
      contents: `${await readFile(args.path, 'utf8')}\nimport ${JSON.stringify(door)};\n`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
});

export const bundleLibrary = async (): Promise<void> => {
  const outdir = join(root, 'dist/lib');
  await rm(outdir, { recursive: true, force: true });
  const door = join(root, 'dist/src/index.js');
  // Whitespace and syntax minified (names kept, so stack traces still name rein's functions and classes): Node reads
  // and compiles every byte of the door's chunk at import, and the indentation alone was ~30% of them.
  await build({ ...bundleOptions({ index: door, testing: join(root, 'dist/src/testing/index.js') }, outdir, [bundleOnly(bundled), msgpackrWithoutExtractor, oneDoorChunk(door)]), minifyWhitespace: true, minifySyntax: true });
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleLibrary();
