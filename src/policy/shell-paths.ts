import { lstatSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { canonicalPath, isInside, protectedKey } from './protected-paths.js';

/** What the classifier knows when it judges the paths of a command line. */
export interface PathScope {
  /** The canonical workspace root. */
  workspace: string;
  /** The working directory of the current simple command (follows `cd`). */
  cwd: string;
  /** Canonical protected paths. */
  protectedPaths: readonly string[];
  /** What `~` and `$HOME` expand to. */
  home: string;
  /** Variables the line assigns before using them, plus `HOME`, `PWD`, `OLDPWD`, `TMPDIR`. */
  variables: Map<string, string>;
}

/** How a path a command names relates to the boundary (`special`: a FIFO, socket or device, which can block or act). */
export type PathVerdict = 'inside' | 'outside' | 'protected' | 'hard-link' | 'special';

/** Paths that name no file a command could leak or damage. */
export const quietTargets: ReadonlySet<string> = new Set(['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/stdin', '/dev/stdout', '/dev/stderr', '/dev/tty', '-']);

/** The scope a line starts in. */
export const initialScope = (options: { workspace: string; cwd: string; protectedPaths?: readonly string[]; home?: string }): PathScope => {
  const home = options.home ?? process.env.HOME ?? homedir();
  return {
    workspace: options.workspace,
    cwd: options.cwd,
    protectedPaths: options.protectedPaths ?? [],
    home,
    variables: new Map([['HOME', home], ['PWD', options.cwd], ['OLDPWD', options.cwd], ['TMPDIR', process.env.TMPDIR ?? '/tmp']]),
  };
};

/**
 * Expand what the classifier can see in one word: a leading `~` or `~user` (any other user's home is outside),
 * `$NAME` and `${NAME}` from the scope (unknown variables are empty, as in the cleared environment commands get).
 */
export const expandWord = (word: string, scope: PathScope): string => {
  let text = word;
  if (text === '~' || text.startsWith('~/')) text = scope.home + text.slice(1);
  else if (/^~[A-Za-z_][\w.-]*(\/|$)/.test(text)) text = `/home/${text.slice(1)}`;
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, braced: string | undefined, plain: string | undefined) => scope.variables.get((braced ?? plain)!) ?? '');
};

const globCharacters = /[*?[]/;
const maxGlobMatches = 1_000;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * A glob component as bash matches it: `*`, `?`, and a bracket expression `[…]` (`[!…]` or `[^…]` negated, a `]`
 * right after the opening is a member). A `[` without its closing `]` is a literal character, as in bash (`[ -f x ]`
 * has one), and every other character matches itself.
 */
export const globRegExp = (component: string): RegExp => {
  let source = '';
  for (let index = 0; index < component.length; index++) {
    const char = component[index]!;
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[') {
      let end = index + 1;
      const negated = component[end] === '!' || component[end] === '^';
      if (negated) end++;
      if (component[end] === ']') end++;
      while (end < component.length && component[end] !== ']') end++;
      if (end >= component.length) {
        source += '\\[';
        continue;
      }
      const members = component.slice(index + 1 + (negated ? 1 : 0), end);
      source += `[${negated ? '^' : ''}${members.replace(/[\\\]\[^]/g, '\\$&')}]`;
      index = end;
    } else source += escapeRegExp(char);
  }
  try {
    return new RegExp(`^${source}$`);
  } catch {
    // A bracket expression bash accepts but a RegExp refuses (a reversed range such as `[z-a]`): matched literally.
    return new RegExp(`^${escapeRegExp(component)}$`);
  }
};

/** Expand glob characters component by component against the file system; undefined when there are too many matches. */
const expandGlob = (absolute: string): string[] | undefined => {
  const components = absolute.split('/').filter(Boolean);
  let candidates = ['/'];
  for (const component of components) {
    if (!globCharacters.test(component)) {
      candidates = candidates.map((base) => join(base, component));
      continue;
    }
    const pattern = globRegExp(component);
    const next: string[] = [];
    for (const base of candidates) {
      let names: string[];
      try {
        names = readdirSync(base);
      } catch {
        continue;
      }
      for (const name of names) if ((component.startsWith('.') || !name.startsWith('.')) && pattern.test(name)) next.push(join(base, name));
      if (next.length > maxGlobMatches) return undefined;
    }
    // A pattern that matches nothing stays literal in bash.
    candidates = next.length > 0 ? next : candidates.map((base) => join(base, component));
  }
  return candidates;
};

const judgeOne = (absolute: string, scope: PathScope): PathVerdict => {
  const real = canonicalPath(absolute);
  if (!isInside(scope.workspace, real)) return 'outside';
  const key = protectedKey(real);
  const lexical = protectedKey(absolute);
  if (scope.protectedPaths.some((path) => isInside(protectedKey(path), key) || isInside(protectedKey(path), lexical))) return 'protected';
  try {
    const info = lstatSync(real);
    if (info.isFile() && info.nlink > 1) return 'hard-link';
    if (!info.isFile() && !info.isDirectory() && !info.isSymbolicLink()) return 'special';
  } catch {
    // Not there (yet): judged by its nearest existing ancestor above.
  }
  return 'inside';
};

const severity: Record<PathVerdict, number> = { inside: 0, special: 1, 'hard-link': 1, protected: 2, outside: 3 };

/**
 * Judge one word a command was given as if it were a path (the classifier cannot know which words are): expanded,
 * resolved against the working directory, globbed, and compared by real path — so a symlink made before the run
 * that leads out is seen, and so is a protected path under any alias. The worst verdict of its matches wins.
 */
export const judgeWord = (word: string, scope: PathScope): PathVerdict => {
  const expanded = expandWord(word, scope);
  if (expanded === '' || quietTargets.has(expanded) || /^&?\d+$/.test(expanded)) return 'inside';
  if (expanded.startsWith('-') && !expanded.includes('/')) return 'inside';
  const absolute = resolve(scope.cwd, isAbsolute(expanded) ? expanded : `./${expanded}`);
  const matches = globCharacters.test(expanded) ? expandGlob(absolute) : [absolute];
  if (!matches) return 'outside';
  return matches.map((match) => judgeOne(match, scope)).reduce((worst, verdict) => (severity[verdict] > severity[worst] ? verdict : worst), 'inside' as PathVerdict);
};

/** The working directory after `cd <word>` (`cd` alone goes home). */
export const changeDirectory = (word: string | undefined, scope: PathScope): string => {
  if (word === undefined || word === '~') return scope.home;
  if (word === '-') return scope.variables.get('OLDPWD') ?? scope.cwd;
  // Where it would lead even if it does not exist yet: the commands after it are judged from there.
  return canonicalPath(resolve(scope.cwd, expandWord(word, scope)));
};
