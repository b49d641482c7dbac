import { spawn } from 'node:child_process';
import { lstat, realpath } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { processArea } from '../areas/process-loader.js';
import type { Workspace } from './workspace.js';
import * as z from 'zod';
import { defaultIgnoredDirectories, protectedNames, resolveSearchScope, type SearchScope } from './search-scope.js';
import { defineTool, readOnlyAnnotations, toolFailure, type ToolFailure, type ToolResult } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const GrepParameters = lazySchema(() => z
  .object({
    pattern: z.string().min(1),
    path: z.string().min(1).default('.').describe('File or directory to search'),
    include: z.string().min(1).optional().describe('Only files matching this glob, e.g. *.ts'),
    max_matches: z.number().int().min(1).max(10_000).default(100),
    case_insensitive: z.boolean().optional(),
  })
  .strict());
export type GrepParameters = z.infer<typeof GrepParameters>;

/** One match: workspace-relative file, 1-based line, and the line's text (clipped). */
export interface GrepMatch {
  file: string;
  line: number;
  text: string;
}

let ripgrep: Promise<string> | undefined;

/** The ripgrep binary shipped by `@vscode/ripgrep`, loaded on first use. */
export const ripgrepPath = (): Promise<string> => (ripgrep ??= import('@vscode/ripgrep').then((module) => module.rgPath));

/**
 * The ripgrep arguments grep runs (the benchmark runs ripgrep directly with exactly these): line numbers, NUL after
 * the file name, no colour, hidden files included, `.git`, `node_modules` (unless searched directly) and protected
 * paths excluded, files over 10 MB and binary files skipped, symlinks not followed.
 */
export const ripgrepArguments = (args: Pick<GrepParameters, 'pattern' | 'include' | 'case_insensitive'>, options: { target: string | undefined; excluded: readonly string[] }): string[] => [
  '--no-config', '--line-number', '--with-filename', '--no-heading', '--null', '--color', 'never', '--hidden',
  '--max-filesize', '10M', '--max-columns', '1000',
  ...options.excluded.flatMap((name) => ['--glob', `!${name}`]),
  ...(args.include ? ['--glob', args.include] : []),
  ...(args.case_insensitive ? ['--ignore-case'] : []),
  '--regexp', args.pattern,
  ...(options.target === undefined ? [] : ['--', options.target]),
];

const clip = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}…` : text);

/**
 * Search file contents with ripgrep. Returns `[{ file, line, text }]` as JSON, sorted by file and line; binary files
 * and files over 10 MB are skipped, and `.git`, `node_modules` and protected paths are not searched unless `path`
 * points inside them. Stops after `max_matches` and says so. A bad regex is `InvalidInput`.
 */
export const grepTool = defineTool<GrepParameters, SearchScope>({
  name: 'grep',
  description: 'Search file contents with a regex (ripgrep syntax); returns JSON [{"file","line","text"}] and skips binary files, files over 10 MB, .git and node_modules.',
  parameters: GrepParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  timeoutMs: 60_000,
  async prepare(args, context) {
    const scope = await resolveSearchScope(context, args.path);
    if ('ok' in scope) return scope;
    return { ok: true, plan: scope, subject: { target: scope.relative } };
  },
  async execute(args, context, scope) {
    const excluded = [...defaultIgnoredDirectories.filter((name) => !scope.relative.split('/').includes(name)), ...protectedNames(context)];
    const target = scope.relative === '.' ? undefined : scope.relative;
    const binary = await ripgrepPath();
    // ripgrep runs in the sandbox when bubblewrap works: a directory swapped for a symlink mid-search leads nowhere.
    const launch = await (await processArea()).sandboxedHelper({ argv: [binary, ...ripgrepArguments(args, { target, excluded })], cwd: context.workspace.root, workspace: context.workspace, policy: context.sandbox, toolDirectories: [dirname(binary)] });
    const result = await runRipgrep(launch.argv, { cwd: context.workspace.root, maxMatches: args.max_matches, signal: context.signal, isProtected: (file) => context.workspace.isProtected(join(context.workspace.root, file)) });
    return result.ok ? withoutUnsafeFiles(result, context.workspace) : result;
  },
});

/**
 * Drop matches in files that are no longer what the boundary allows when checked again by real path (outside,
 * protected) or that have several hard links (their other names may lie outside), and say how many were dropped.
 */
const withoutUnsafeFiles = async (result: Extract<ToolResult, { ok: true }>, workspace: Workspace): Promise<ToolResult> => {
  const { matches, truncated } = result.data as { matches: GrepMatch[]; truncated: boolean };
  const verdicts = new Map<string, boolean>();
  for (const file of new Set(matches.map((match) => match.file))) {
    const absolute = join(workspace.root, file);
    const real = await realpath(absolute).catch(() => '');
    const info = await lstat(absolute).catch(() => undefined);
    verdicts.set(file, real === absolute && workspace.allows(real) && info !== undefined && info.isFile() && info.nlink === 1);
  }
  const kept = matches.filter((match) => verdicts.get(match.file));
  if (kept.length === matches.length) return result;
  const note = `\n(${matches.length - kept.length} matches in files that are hard-linked, protected or outside the workspace were left out)`;
  return { ...result, output: JSON.stringify(kept) + note, data: { matches: kept, truncated } };
};

const runRipgrep = (argv: readonly string[], options: { cwd: string; maxMatches: number; signal: AbortSignal; isProtected: (file: string) => boolean }): Promise<Extract<ToolResult, { ok: true }> | ToolFailure> =>
  new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const matches: GrepMatch[] = [];
    let more = false;
    let pending = '';
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    options.signal.addEventListener('abort', onAbort, { once: true });
    const take = (line: string) => {
      const nul = line.indexOf('\0');
      if (nul === -1) return;
      const colon = line.indexOf(':', nul);
      const lineNumber = Number(line.slice(nul + 1, colon));
      if (colon === -1 || !Number.isInteger(lineNumber)) return;
      const file = relative('.', line.slice(0, nul));
      if (options.isProtected(file)) return;
      if (matches.length >= options.maxMatches) {
        more = true;
        child.kill('SIGTERM');
        return;
      }
      matches.push({ file, line: lineNumber, text: clip(line.slice(colon + 1)) });
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (more) return;
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (!more) take(line);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 2_000) stderr += chunk;
    });
    child.on('error', (error) => resolve(toolFailure('NotFound', `ripgrep could not start: ${error.message}`, 'tool_unavailable')));
    child.on('close', (code) => {
      options.signal.removeEventListener('abort', onAbort);
      if (!more && pending) take(pending);
      if (options.signal.aborted) return resolve(toolFailure('Cancelled', 'grep was cancelled'));
      if (code === 2 && !more && matches.length === 0 && /regex|pars|unrecognized|unclosed|repetition/i.test(stderr)) return resolve(toolFailure('InvalidInput', `grep: ${stderr.trim().split('\n').slice(0, 6).join(' ').slice(0, 600) || 'ripgrep failed'}`, 'invalid_pattern'));
      matches.sort((left, right) => (left.file < right.file ? -1 : left.file > right.file ? 1 : left.line - right.line));
      const note = more ? `\n… stopped at max_matches=${options.maxMatches}; more matches exist. Narrow the pattern, use include or path, or raise max_matches.` : matches.length === 0 ? '\n(no matches)' : '';
      resolve({ ok: true, output: JSON.stringify(matches) + note, data: { matches, truncated: more } });
    });
  });
