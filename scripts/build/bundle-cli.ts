import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundleOnly, bundleOptions, msgpackrWithoutExtractor, root } from './bundle-options.js';

/*
 * `npm run build`, second half: bundle the compiled CLI (dist/src/cli/main.js) into dist/cli/rein.js, the `rein`
 * binary. Node spends most of a short command's time resolving, reading and compiling modules (500+ files for
 * `rein --help` before), so the CLI ships as one entry file plus one chunk per lazily loaded command action
 * (`import('./x.action.js')` becomes a split point). Only pure-JavaScript packages on the CLI's own paths are bundled
 * (rxjs from its ES module build, so unused operators drop out); every other package — native addons
 * (classic-level, msgpackr's extension), packages that find files next to themselves (@vscode/ripgrep), optional
 * or large ones — stays an ordinary import resolved from node_modules. The library is bundled by bundle-lib.ts with
 * the same options (bundle-options.ts).
 */

/**
 * Bundled packages. classic-level's JavaScript and the small CommonJS packages under it (about thirty files, whose
 * resolution and loading cost a reading command ~30 ms) are bundled too; its native addon is still found in its own
 * package at run time (`classicLevelBinding`). msgpackr is bundled without its optional native string extractor
 * (`msgpackrWithoutExtractor`).
 */
const bundled = new Set([
  'commander',
  'rxjs',
  'zod',
  'xstate',
  'msgpackr',
  'classic-level',
  'abstract-level',
  'level-supports',
  'level-transcoder',
  'maybe-combine-errors',
  'module-error',
  'is-buffer',
  'node-gyp-build',
]);

/**
 * classic-level finds its addon next to its own files (`node-gyp-build(__dirname)`); bundled, `__dirname` would be the
 * bundle's folder, so the binding module asks Node where the installed package is instead, at run time.
 */
const classicLevelBinding: Plugin = {
  name: 'rein-classic-level-binding',
  setup(context) {
    context.onLoad({ filter: /[\\/]classic-level[\\/]binding\.js$/ }, () => ({
      contents: "module.exports = require('node-gyp-build')(require('node:path').dirname(require.resolve('classic-level/package.json')));",
      loader: 'js',
    }));
  },
};

/**
 * commander requires `node:child_process` (and so `net` and `dgram`) when it loads, only to spawn executable
 * subcommands, which rein does not have; bundled, it requires the module on its first spawn instead.
 */
const commanderLazyChildProcess: Plugin = {
  name: 'rein-commander-lazy-child-process',
  setup(context) {
    context.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const eager = "const childProcess = require('node:child_process');";
      if (!source.includes(eager)) throw new Error(`commander's command.js changed: ${eager} not found`);
      return { contents: source.replace(eager, "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };"), loader: 'js' };
    });
  },
};

export const bundleCli = async (): Promise<void> => {
  const outdir = join(root, 'dist/cli');
  await rm(outdir, { recursive: true, force: true });
  await build(bundleOptions({ rein: join(root, 'dist/src/cli/main.js') }, outdir, [bundleOnly(bundled), classicLevelBinding, msgpackrWithoutExtractor, commanderLazyChildProcess]));
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli();
