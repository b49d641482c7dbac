import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';

/*
 * What the CLI bundle (bundle-cli.ts) and the library bundle (bundle-lib.ts) share: the package root, the esbuild
 * options both build with, and the plugin that decides which packages go into a bundle and which stay ordinary
 * imports resolved from node_modules at run time.
 */

/** The package root (this file runs from dist/scripts/build). */
export const root = fileURLToPath(new URL('../../../', import.meta.url));

const requireFromRoot = createRequire(join(root, 'package.json'));

/** The package a bare specifier names: `@scope/name` or `name`. */
export const packageOf = (specifier: string): string => {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
};

/**
 * Bundle the `bundled` packages and leave every other package import (and Node's built-ins) alone. rxjs is taken from
 * its ES module build, so unused operators drop out and its 200-odd CommonJS files are never read.
 */
export const bundleOnly = (bundled: ReadonlySet<string>): Plugin => ({
  name: 'rein-bundled-packages',
  setup(context) {
    context.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      if (!bundled.has(packageOf(args.path))) return { path: args.path, external: true };
      if (args.path === 'rxjs') return { path: join(dirname(requireFromRoot.resolve('rxjs/package.json')), 'dist/esm/index.js') };
      return undefined;
    });
  },
});

/**
 * The options every rein bundle is built with: ES modules for Node 20, split into one file per entry plus shared
 * chunks (and one per `import()`, so what is loaded lazily stays out of the start-up path). The banner gives the
 * CommonJS packages inside a bundle the `require` they call for Node's built-ins.
 */
export const bundleOptions = (entryPoints: Record<string, string>, outdir: string, plugins: Plugin[]): BuildOptions => ({
  entryPoints,
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  plugins,
  logLevel: 'warning',
  legalComments: 'none',
  banner: { js: "import { createRequire as __reinCreateRequire } from 'node:module'; const require = __reinCreateRequire(import.meta.url);" },
});

/**
 * msgpackr loads `msgpackr-extract`, an optional native accelerator of string decoding, when it starts; finding it
 * (`node-gyp-build-optional-packages`, which asks `detect-libc` for the C library) costs a short command ~20 ms. The
 * bundles decode with msgpackr's JavaScript, which gives the same values.
 */
export const msgpackrWithoutExtractor: Plugin = {
  name: 'rein-msgpackr-without-extractor',
  setup(context) {
    context.onLoad({ filter: /[\\/]msgpackr[\\/]node-index\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const guard = 'if (!nativeAccelerationDisabled) {';
      if (!source.includes(guard)) throw new Error(`msgpackr's node-index.js changed: ${guard} not found`);
      return { contents: source.replace(guard, 'if (false) {'), loader: 'js' };
    });
  },
};
