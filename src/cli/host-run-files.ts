import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { canonicalPath, isInside } from '../policy/protected-paths.js';
import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';

/** The words of a command line, quotes removed (enough to find the files it names, not a shell). */
const wordsOf = (line: string): string[] => [...line.matchAll(/(?:"[^"]*"|'[^']*'|[^\s"']+)+/g)].map((match) => match[0].replace(/"([^"]*)"|'([^']*)'/g, (_, double: string | undefined, single: string | undefined) => double ?? single ?? ''));

/**
 * The files inside the workspace that the configured command hooks and local MCP servers run: a hook's
 * `./scripts/guard.sh`, a server's `node ./srv.js`. They run on the host, outside the sandbox, with the user's
 * environment, so a model that could edit one would run its code there: each becomes a protected path of the
 * session (file tools refuse it, the sandbox masks it, the classifier asks), like the plugin folders.
 */
export const hostRunFiles = async (workspace: string, hooks: CommandHooksConfig | undefined, servers: Readonly<Record<string, McpServerConfig>>): Promise<string[]> => {
  const root = canonicalPath(resolve(workspace));
  // Each line with the folder its relative words resolve from: a hook runs in the workspace, a server in its `cwd`.
  const lines: Array<{ words: string[]; base: string }> = [];
  for (const matchers of Object.values(hooks ?? {})) for (const matcher of matchers ?? []) for (const hook of matcher.hooks) lines.push({ words: wordsOf(hook.command), base: root });
  for (const server of Object.values(servers)) {
    const local = server as { command?: string; args?: readonly string[]; cwd?: string };
    if (typeof local.command !== 'string') continue;
    const base = local.cwd ? resolve(root, expand(local.cwd, root)) : root;
    // An argument may itself be a command line (`sh -c "./start.sh"`): its words count too.
    lines.push({ words: [local.command, ...(local.args ?? []).flatMap((arg) => (/\s/.test(arg) ? wordsOf(arg) : [arg]))], base });
  }
  const files = new Set<string>();
  for (const { words, base: start } of lines) {
    let base = start;
    for (const [index, raw] of words.entries()) {
      const word = expand(raw, root);
      if (word === '' || word.includes('://')) continue;
      // `cd scripts && ./g.sh`: what follows resolves from there.
      if (raw === 'cd' && words[index + 1] !== undefined) {
        base = resolve(base, expand(words[index + 1]!, root));
        continue;
      }
      // `--config=./x.js` and `VAR=./x` name a file after the `=`; any other option names none.
      const named = word.includes('=') ? word.slice(word.indexOf('=') + 1) : word;
      if (named === '' || named.startsWith('-')) continue;
      const path = canonicalPath(isAbsolute(named) ? named : resolve(base, named));
      if (path === root || !isInside(root, path)) continue;
      const info = await stat(path).catch(() => undefined);
      // A file that exists, a folder named as a path (`npx ./tool`), and a path-like word that does not exist yet
      // (`./scripts/guard.sh` before anyone wrote it: the model must not be the one to create it).
      const pathLike = /^\.{0,2}\//.test(named) || named.includes('/');
      if (info?.isFile() || (pathLike && (info === undefined || info.isDirectory()))) files.add(path);
    }
  }
  return [...files];
};

/** `$CLAUDE_PROJECT_DIR`, `$REIN_PROJECT_DIR` and `$PWD` (braced or not): the workspace, where hooks run. */
const expand = (word: string, root: string): string => word.replace(/\$\{?(CLAUDE_PROJECT_DIR|REIN_PROJECT_DIR|PWD)\}?/g, root);
