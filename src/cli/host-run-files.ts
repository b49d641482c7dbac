import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { canonicalPath, isInside } from '../policy/protected-paths.js';
import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';

/** The words of a command line, quotes removed (enough to find the files it names, not a shell). */
const wordsOf = (line: string): string[] => [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3] ?? '');

/**
 * The files inside the workspace that the configured command hooks and local MCP servers run: a hook's
 * `./scripts/guard.sh`, a server's `node ./srv.js`. They run on the host, outside the sandbox, with the user's
 * environment, so a model that could edit one would run its code there: each becomes a protected path of the
 * session (file tools refuse it, the sandbox masks it, the classifier asks), like the plugin folders.
 */
export const hostRunFiles = async (workspace: string, hooks: CommandHooksConfig | undefined, servers: Readonly<Record<string, McpServerConfig>>): Promise<string[]> => {
  const lines: string[][] = [];
  for (const matchers of Object.values(hooks ?? {})) for (const matcher of matchers ?? []) for (const hook of matcher.hooks) lines.push(wordsOf(hook.command));
  for (const server of Object.values(servers)) {
    const local = server as { command?: string; args?: readonly string[] };
    if (typeof local.command === 'string') lines.push([local.command, ...(local.args ?? [])]);
  }
  const root = canonicalPath(resolve(workspace));
  const files = new Set<string>();
  for (const words of lines) {
    for (const word of words) {
      if (word === '' || word.includes('://')) continue;
      // `--config=./x.js` and `VAR=./x` name a file after the `=`; any other option names none.
      const named = word.includes('=') ? word.slice(word.indexOf('=') + 1) : word;
      if (named === '' || named.startsWith('-')) continue;
      const path = canonicalPath(isAbsolute(named) ? named : resolve(root, named));
      if (path === root || !isInside(root, path)) continue;
      if ((await stat(path).catch(() => undefined))?.isFile()) files.add(path);
    }
  }
  return [...files];
};
