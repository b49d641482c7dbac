import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/*
 * `npm run build`, second half: bundle the compiled CLI (dist/src/cli/main.js) into dist/cli/rein.js, the `rein`
 * binary. Node spends most of a short command's time resolving, reading and compiling modules (500+ files for
 * `rein --help` before), so the CLI ships as one entry file plus one chunk per lazily loaded command action
 * (`import('./x.action.js')` becomes a split point). Only pure-JavaScript packages on the CLI's own paths are bundled
 * (rxjs from its ES module build, so unused operators drop out); every other package — native addons
 * (classic-level, msgpackr's extension), packages that find files next to themselves (@vscode/ripgrep), optional
 * or large ones — stays an ordinary import resolved from node_modules, as for the library. The library (dist/src,
 * `rein` and `rein/testing`) is not bundled.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bundled = new Set(['commander', 'rxjs', 'zod', 'xstate']);
const requireFromRoot = createRequire(join(root, 'package.json'));

const packageOf = (specifier: string): string => {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
};

/** Leave every package import alone except the bundled ones; take rxjs from its ES2015 module build. */
const onlyBundled: Plugin = {
  name: 'rein-bundled-packages',
  setup(context) {
    context.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const name = packageOf(args.path);
      if (!bundled.has(name)) return { path: args.path, external: true };
      if (args.path === 'rxjs') return { path: join(dirname(requireFromRoot.resolve('rxjs/package.json')), 'dist/esm/index.js') };
      return undefined;
    });
  },
};

export const bundleCli = async (): Promise<void> => {
  const outdir = join(root, 'dist/cli');
  await rm(outdir, { recursive: true, force: true });
  await build({
    entryPoints: { rein: join(root, 'dist/src/cli/main.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [onlyBundled],
    logLevel: 'warning',
    legalComments: 'none',
    // CommonJS packages inside the bundle (commander, xstate) call require() for Node's built-ins.
    banner: { js: "import { createRequire as __reinCreateRequire } from 'node:module'; const require = __reinCreateRequire(import.meta.url);" },
  });
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli();
