import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { Ignore } from 'ignore';
import type { CaptureRules } from '../../models/workspace.records.js';

/** ignore (a 50 kB CommonJS file) is loaded when the first capture filter is built, not when rein is imported. */
let ignoreFactory: typeof import('ignore') | undefined;
const ignore = (): Ignore => (ignoreFactory ??= createRequire(import.meta.url)('ignore') as typeof import('ignore'))();

/** The capture's settings (`capture` in `rein.config.json` and `createRein`). */
export interface CaptureOptions {
  /** Capture at all (default true). */
  enabled?: boolean;
  /** Leave out what the workspace's `.gitignore` files (and `.git/info/exclude`) ignore (default true). */
  gitignore?: boolean;
  /** More paths to leave out, as `.gitignore` patterns. */
  exclude?: readonly string[];
  /** Paths to capture even though `.gitignore` or the defaults leave them out, as `.gitignore` patterns (rein's own paths never). */
  include?: readonly string[];
  /** Files above this size are recorded by digest and size only, and cannot be restored (default 10 MB). */
  maxFileMb?: number;
}

/** The default size cap of a captured file's bytes. */
export const defaultMaxFileBytes = 10 * 1024 * 1024;

/**
 * Left out by default (an `include` pattern brings them back): git's own folder and the temp files of an atomic write
 * or a rewind (`.<name>.rein-<hex>.tmp`). rein's own paths — the protected ones: the store, `rein.config.json`,
 * `.mcp.json`, skills, project plugins, git's control files — are never captured: a rewind must not revert them.
 */
const defaultExclusions = ['/.git', '.*.rein-*.tmp'];

const toPosix = (path: string): string => (sep === '/' ? path : path.split(sep).join('/'));

/**
 * Which workspace paths the capture sees. Paths are workspace-relative and `/`-separated; a directory is tested with
 * its own name (its trailing `/` added here). `.gitignore` files are read once per directory, when first needed, and
 * held for the capture's life (a change to one applies from the next capture on). The paths in `never` (absolute, or
 * workspace-relative: the workspace's protected paths, the store among them) are always left out.
 */
export class CaptureFilter {
  readonly rules: CaptureRules;
  private readonly fixed: Ignore;
  private readonly included: Ignore | undefined;
  private readonly never: string[];
  private readonly gitignores = new Map<string, Ignore | null>();

  constructor(
    private readonly root: string,
    options: CaptureOptions = {},
    never: readonly string[] = [],
  ) {
    const exclude = [...(options.exclude ?? [])];
    const include = [...(options.include ?? [])];
    const maxFileBytes = Math.round((options.maxFileMb ?? defaultMaxFileBytes / 1024 / 1024) * 1024 * 1024);
    this.never = [...new Set(never.map((path) => (isAbsolute(path) ? toPosix(relative(root, path)) : path)).filter((path) => path !== '' && !path.startsWith('..') && !path.startsWith('/')))].sort();
    this.rules = { gitignore: options.gitignore ?? true, exclude, include, maxFileBytes, never: this.never };
    this.fixed = ignore().add(defaultExclusions).add(exclude);
    this.included = include.length > 0 ? ignore().add(include) : undefined;
  }

  /** Also leave out these workspace-relative paths (those a session never captured before: kept out on resume too). */
  neverAlso(paths: readonly string[]): void {
    for (const path of paths) if (!this.never.includes(path)) this.never.push(path);
    this.never.sort();
  }

  /** True when the capture leaves `path` out (`directory`: it is a directory). */
  excluded(path: string, directory: boolean): boolean {
    for (const never of this.never) if (path === never || path.startsWith(`${never}/`)) return true;
    const tested = directory ? `${path}/` : path;
    if (this.included?.ignores(tested)) return false;
    if (this.fixed.ignores(tested)) return true;
    return this.rules.gitignore && this.gitignored(path, directory);
  }

  private gitignored(path: string, directory: boolean): boolean {
    let ignored = false;
    let at = '';
    const parts = path.split('/');
    for (let depth = 0; depth < parts.length; depth++) {
      const rules = this.gitignoreOf(at);
      if (rules) {
        const rest = parts.slice(depth).join('/');
        const result = rules.test(directory ? `${rest}/` : rest);
        if (result.ignored) ignored = true;
        else if (result.unignored) ignored = false;
      }
      at = at === '' ? parts[depth]! : `${at}/${parts[depth]}`;
    }
    return ignored;
  }

  private gitignoreOf(directory: string): Ignore | null {
    const cached = this.gitignores.get(directory);
    if (cached !== undefined) return cached;
    const texts = [readText(join(this.root, directory, '.gitignore'))];
    if (directory === '') texts.push(readText(join(this.root, '.git', 'info', 'exclude')));
    const present = texts.filter((text): text is string => text !== undefined);
    const rules = present.length > 0 ? ignore().add(present.join('\n')) : null;
    this.gitignores.set(directory, rules);
    return rules;
  }
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};
