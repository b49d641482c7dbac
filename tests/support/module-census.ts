import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/*
 * A module census: which modules a Node process loads. A resolve hook (registered with `module.register`, its
 * `data.file` the log) appends the URL of every module Node resolves, one a line. Used by the CLI start-up test
 * (tests/cli/startup-modules.test.ts) and the library's (tests/package/library-modules.test.ts); the times are
 * measured by benchmarks, never asserted.
 */

const resolveHook = `import { appendFileSync } from 'node:fs';
let file;
export const initialize = (data) => { file = data.file; };
export const resolve = async (specifier, context, next) => {
  const resolved = await next(specifier, context);
  appendFileSync(file, resolved.url + '\\n');
  return resolved;
};
`;

/** Writes the resolve hook into `directory`; returns its file URL, for `register(url, { data: { file } })`. */
export const writeResolveHook = async (directory: string): Promise<string> => {
  const path = join(directory, 'record-hook.mjs');
  await writeFile(path, resolveHook);
  return pathToFileURL(path).href;
};

/** The URLs in a census log, each once, in the order first loaded. */
export const readModuleLog = async (log: string): Promise<string[]> => [...new Set((await readFile(log, 'utf8')).split('\n').filter(Boolean))];

/** The package (by name, `@scope/name` or `name`) a module URL belongs to, or undefined for a file outside node_modules or a built-in. */
export const packageOfUrl = (url: string): string | undefined => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
