import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/*
 * `npm run build`, third part: bundle the library's two doors (`rein`, `rein/testing`) into dist/lib, one entry file
 * each plus shared chunks, so a class is one class whichever door it came through. `import 'rein'` used to resolve,
 * read and compile ~700 files (355 of rein's own, 223 of rxjs's CommonJS build); Node's per-file cost was most of it.
 * rein's code and rxjs (from its ES module build) are bundled; every other package stays an ordinary import resolved
 * from node_modules — zod and xstate because a host passes its own schemas and may drive the exported machines with
 * its own xstate, native addons and the optional packages (pg, OpenTelemetry, the MCP SDK, classic-level, yaml,
 * tinyglobby) because rein imports them where it uses them. The types stay in dist/src (`types` in package.json).
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const requireFromRoot = createRequire(join(root, 'package.json'));

/** Every package import stays external except rxjs, which is taken from its ES module build. */
const onlyRxjs: Plugin = {
  name: 'rein-library-packages',
  setup(context) {
    context.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path === 'rxjs') return { path: join(dirname(requireFromRoot.resolve('rxjs/package.json')), 'dist/esm/index.js') };
      return { path: args.path, external: true };
    });
  },
};

export const bundleLibrary = async (): Promise<void> => {
  const outdir = join(root, 'dist/lib');
  await rm(outdir, { recursive: true, force: true });
  await build({
    entryPoints: { index: join(root, 'dist/src/index.js'), testing: join(root, 'dist/src/testing/index.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [onlyRxjs],
    logLevel: 'warning',
    legalComments: 'none',
  });
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleLibrary();
