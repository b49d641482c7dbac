import type { readdir } from 'node:fs';
import { join } from 'node:path';
import { pinnedReaddir } from './pinned-directory.js';
import * as z from 'zod';
import { defaultIgnoredDirectories, defaultMaxResults, escapingPattern, protectedNames, resolveSearchScope, workspaceRelative, type SearchScope } from './search-scope.js';
import { defineTool, readOnlyAnnotations, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const GlobParameters = lazySchema(() => z
  .object({
    // Bounded: a pattern of hundreds of thousands of characters compiles to a regular expression too large to run,
    // which the walker would throw outside any promise (an uncaught exception, not a result).
    pattern: z.string().min(1).max(1_024).describe('Relative to path, e.g. **/*.ts'),
    path: z.string().min(1).default('.').describe('Directory to search from'),
    max_results: z.number().int().min(1).max(10_000).optional().describe(`Most paths returned (default ${defaultMaxResults})`),
  })
  .strict());
export type GlobParameters = z.infer<typeof GlobParameters>;

/** The tinyglobby options glob uses (the benchmark calls tinyglobby with exactly these). */
export const globOptions = (scope: SearchScope, ignored: readonly string[]) => ({
  cwd: scope.base,
  ignore: ignored.flatMap((name) => [`**/${name}`, `**/${name}/**`]),
  dot: true,
  onlyFiles: true,
  followSymbolicLinks: false,
  expandDirectories: false,
  // Every directory is listed by descriptor after its real path is checked, so a swap mid-walk cannot lead out.
  fs: { readdir: pinnedReaddir as unknown as typeof readdir },
});

/**
 * Find files by name pattern inside the workspace. Returns workspace-relative paths as JSON, sorted; `.git`,
 * `node_modules` and protected paths are skipped unless the search starts inside them. A capped list says so.
 */
export const globTool = defineTool<GlobParameters, SearchScope>({
  name: 'glob',
  description: 'Find files by glob pattern. Returns workspace-relative paths as JSON; skips .git and node_modules unless path is inside them.',
  parameters: GlobParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  timeoutMs: 60_000,
  async prepare(args, context) {
    const escaping = escapingPattern(args.pattern);
    if (escaping) return escaping;
    const scope = await resolveSearchScope(context, args.path);
    if ('ok' in scope) return scope;
    return { ok: true, plan: scope, subject: { target: scope.relative } };
  },
  async execute(args, context, scope) {
    const ignored = [...defaultIgnoredDirectories, ...protectedNames(context)];
    let found: string[];
    try {
      // tinyglobby (and picomatch, fdir) load on the first glob, not when rein is imported.
      const { glob } = await import('tinyglobby');
      found = await glob(args.pattern, { ...globOptions(scope, ignored), signal: context.signal });
    } catch (error) {
      if (context.signal.aborted) return toolFailure('Cancelled', 'glob was cancelled');
      return toolFailure('InvalidInput', `the pattern could not be used: ${(error as Error).message.slice(0, 200)}`, 'invalid_pattern');
    }
    const paths = found.filter((path) => !context.workspace.isProtected(join(scope.base, path))).map((path) => workspaceRelative(scope, path)).sort();
    const limit = args.max_results ?? defaultMaxResults;
    const shown = paths.slice(0, limit);
    const note = paths.length > limit ? `\n… ${paths.length} paths matched; showing the first ${limit}. Narrow the pattern or the path, or raise max_results.` : paths.length === 0 ? '\n(no paths matched)' : '';
    return { ok: true, output: JSON.stringify(shown) + note, data: { paths: shown, matched: paths.length, truncated: paths.length > limit } };
  },
});
