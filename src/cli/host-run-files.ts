import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { canonicalPath, isInside } from '../policy/protected-paths.js';
import type { CommandHooksConfig } from '../hooks/command-hooks.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';

/**
 * The words of a command line, quotes removed, split at the shell's operators (`;`, `|`, `&`, `<`, `>`, parentheses)
 * outside quotes — enough to find the files it names, not a shell. A command substitution (`$(pwd)`, `` `…` ``) is
 * replaced by `$PWD` first: `$(pwd)` is the workspace, and any other substitution is taken to name it too, so what
 * follows it (`"$(git rev-parse --show-toplevel)"/scripts/g.sh`) is looked for there.
 */
const wordsOf = (line: string): string[] =>
  [...line.replace(/\$\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|`[^`]*`/g, '$PWD').matchAll(/(?:"[^"]*"|'[^']*'|[^\s"';|&<>()])+/g)].map((match) => match[0].replace(/"([^"]*)"|'([^']*)'/g, (_, double: string | undefined, single: string | undefined) => double ?? single ?? ''));

/** A word holding a glob character: the shell expands it against the file system. */
const globbed = (word: string): boolean => /[*?]|\[[^\]/]+\]/.test(word);

/** A glob component as a regular expression (`*`, `?`, `[…]`). */
const globRegex = (component: string): RegExp => {
  try {
    return globPattern(component);
  } catch {
    // A bracket the shell would take literally: match anything (protect every entry rather than miss one).
    return /^/;
  }
};
const globPattern = (component: string): RegExp =>
  new RegExp(`^${component.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.').replace(/\[!/g, '[^')}$`);

/**
 * The files inside the workspace that the configured command hooks and local MCP servers run: a hook's
 * `./scripts/guard.sh`, a server's `node ./srv.js`. A host hook or server runs them outside the sandbox with the
 * user's environment, and a sandboxed hook's answer still decides what the model may do, so a model that could edit
 * one would run its code there or choose that answer: each becomes a protected path of the session (file tools refuse
 * it, the bash sandbox masks it, the classifier asks), like the plugin folders.
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
      // `python -m tools.g3` runs the package folder `tools` (or the module `tools.py`) of the working folder.
      if (/^-m$/.test(words[index - 1] ?? '') && words.slice(0, index - 1).some((program) => /(?:^|\/)python[\d.]*$/.test(program)) && /^[\w.]+$/.test(named)) {
        const top = named.split('.')[0]!;
        for (const candidate of [resolve(base, top), resolve(base, `${top}.py`)]) {
          const path = canonicalPath(candidate);
          if (path !== root && isInside(root, path)) files.add(path);
        }
        continue;
      }
      // `node -r mod`, `--require`, `--import`, `--loader`: a bare name is a package of the workspace's node_modules.
      if (/^(?:-r|--require|--import|--loader|--experimental-loader)$/.test(words[index - 1] ?? '') && /^[@\w][\w./@-]*$/.test(named) && !named.includes('..') && !/^\.{0,2}\//.test(named)) {
        const path = canonicalPath(resolve(base, 'node_modules', named.startsWith('@') ? named.split('/').slice(0, 2).join('/') : named.split('/')[0]!));
        if (isInside(root, path)) files.add(path);
        continue;
      }
      // `ruby -Ilib`, `perl -Ilib`: a folder of code the program loads.
      if (/^-I./.test(named) && !named.startsWith('-I/')) {
        const path = canonicalPath(resolve(base, named.slice(2)));
        if (path !== root && isInside(root, path)) files.add(path);
        continue;
      }
      if (named === '' || named.startsWith('-')) continue;
      // A glob (`scripts/checks/*.sh`) runs whatever matches when the hook runs, files added later included: the folder
      // it lies in is protected (and, for a glob at the workspace root, the entries it matches now).
      if (globbed(named)) {
        const components = (isAbsolute(named) ? named : resolve(base, named)).split('/');
        const first = components.findIndex(globbed);
        const folder = canonicalPath(components.slice(0, first).join('/') || '/');
        if (!isInside(root, folder)) continue;
        if (folder !== root) {
          files.add(folder);
          continue;
        }
        const pattern = globRegex(components[first]!);
        for (const entry of await readdir(root).catch(() => [] as string[])) if (pattern.test(entry)) files.add(canonicalPath(resolve(root, entry)));
        continue;
      }
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

/**
 * Expand a word's parameters as a hook would see them: `$CLAUDE_PROJECT_DIR`, `$REIN_PROJECT_DIR` and `$PWD` (braced
 * or not) are the workspace, where hooks run; `${VAR:-default}` (and `-`, `=`, `:=`, `+`, `:+`, `?`) is its default
 * or alternative, expanded in turn; any other variable is unknown here and is taken to be the workspace too, so a
 * path after it (`$TOOLS/scripts/g.sh`) is protected rather than missed.
 */
const expand = (word: string, root: string, depth = 0): string =>
  word.replace(/\$\{#?(\w+)(?:(:?[-=?+])((?:[^{}]|\{[^{}]*\})*))?\}|\$(\w+|[@*#?$!-])/g, (_, braced: string | undefined, operator: string | undefined, alternative: string | undefined, plain: string | undefined) => {
    const name = braced ?? plain ?? '';
    if (/^(?:CLAUDE_PROJECT_DIR|REIN_PROJECT_DIR|PWD)$/.test(name)) return root;
    if (operator !== undefined && alternative !== undefined && alternative !== '' && !operator.endsWith('?') && depth < 8) return expand(alternative, root, depth + 1);
    return root;
  });
