/** One setting of a git configuration file: its section and key lowercased, its subsection as written. */
export interface GitConfigEntry {
  section: string;
  subsection?: string;
  key: string;
  /** The value after quoting and escapes are undone; `undefined` for a bare key (a boolean `true`). */
  value?: string;
  /** The 1-based line the key is on. */
  line: number;
}

/** A configuration text git would refuse, or that this reader does not follow as git does: where and why. */
export class GitConfigSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly why: string,
  ) {
    super(`line ${line}: ${why}`);
  }
}

const isAlpha = (char: string | undefined): boolean => char !== undefined && /^[A-Za-z]$/.test(char);
const isKeyChar = (char: string | undefined): boolean => char !== undefined && /^[A-Za-z0-9-]$/.test(char);
const isSpace = (char: string | undefined): boolean => char === ' ' || char === '\t' || char === '\r' || char === '\f' || char === '\v';

/**
 * Read a git configuration file the way git's own parser (`config.c`) does: comments (`#`, `;`), section headers
 * (`[core]`, `[remote "origin"]` with `\"` and `\\` escapes, the old `[branch.main]`), keys on the header's own line
 * (`[core] fsmonitor = x`) or on their own, several values for a key, a bare key (true), values with double quotes,
 * the escapes `\n \t \b \" \\`, a backslash at the end of a line continuing the value on the next, and an inline
 * comment outside quotes. Section and key names compare case-insensitively (returned lowercased); a subsection keeps
 * its case (the old dotted form is lowercased, as git does). Anything git would refuse throws `GitConfigSyntaxError`,
 * so a caller that cannot read a file fails closed.
 */
export const parseGitConfig = (input: string): GitConfigEntry[] => {
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  const entries: GitConfigEntry[] = [];
  let at = 0;
  let line = 1;
  let section: string | undefined;
  let subsection: string | undefined;
  const fail = (why: string): never => {
    throw new GitConfigSyntaxError(line, why);
  };
  const skipComment = (): void => {
    while (at < text.length && text[at] !== '\n') at += 1;
  };
  const readHeader = (): void => {
    at += 1; // '['
    let name = '';
    while (at < text.length && (isKeyChar(text[at]) || text[at] === '.')) name += text[at++];
    if (name === '') fail('a section header without a name');
    if (text[at] === ']') {
      at += 1;
      const dot = name.indexOf('.');
      // The old form `[section.subsection]`: the subsection is lowercased.
      if (dot >= 0) {
        section = name.slice(0, dot).toLowerCase();
        subsection = name.slice(dot + 1).toLowerCase();
        if (section === '') fail('a section header without a name');
      } else {
        section = name.toLowerCase();
        subsection = undefined;
      }
      return;
    }
    if (!isSpace(text[at])) fail(`an unexpected character ${JSON.stringify(text[at] ?? 'end of file')} in a section header`);
    if (name.includes('.')) fail('a dotted section name with a quoted subsection');
    while (isSpace(text[at])) at += 1;
    if (text[at] !== '"') fail('a subsection that is not quoted');
    at += 1;
    let sub = '';
    for (;;) {
      const char = text[at];
      if (char === undefined || char === '\n') fail('a subsection not closed on its line');
      at += 1;
      if (char === '"') break;
      if (char === '\\') {
        const next = text[at];
        if (next === undefined || next === '\n') fail('a subsection not closed on its line');
        sub += next;
        at += 1;
        continue;
      }
      sub += char;
    }
    if (text[at] !== ']') fail('a section header not closed right after its subsection');
    at += 1;
    section = name.toLowerCase();
    subsection = sub;
  };
  const readValue = (): string => {
    let value = '';
    let quoted = false;
    // Whitespace outside quotes is kept only between words: trailing runs are dropped, inner runs kept as written.
    let pendingSpace = '';
    for (;;) {
      const char = text[at];
      if (char === undefined) {
        if (quoted) fail('a value whose quote is never closed');
        break;
      }
      if (char === '\n') {
        if (quoted) fail('a value whose quote is not closed on its line');
        break;
      }
      at += 1;
      if (!quoted && isSpace(char)) {
        if (value !== '') pendingSpace += ' ';
        continue;
      }
      if (!quoted && (char === '#' || char === ';')) {
        skipComment();
        break;
      }
      value += pendingSpace;
      pendingSpace = '';
      if (char === '\\') {
        const next = text[at];
        at += 1;
        if (next === '\n') {
          line += 1;
          continue;
        }
        if (next === '\r' && text[at] === '\n') {
          at += 1;
          line += 1;
          continue;
        }
        if (next === 'n') value += '\n';
        else if (next === 't') value += '\t';
        else if (next === 'b') value += '\b';
        else if (next === '"' || next === '\\') value += next;
        else fail(`an unknown escape \\${next ?? ''} in a value`);
        continue;
      }
      if (char === '"') {
        quoted = !quoted;
        continue;
      }
      value += char;
    }
    return value;
  };
  const readKey = (): void => {
    if (section === undefined) fail('a key before any section');
    let key = '';
    while (isKeyChar(text[at])) key += text[at++];
    // Only blanks may follow a key (git refuses a comment after a bare key).
    while (text[at] === ' ' || text[at] === '\t' || (text[at] === '\r' && text[at + 1] === '\n')) at += 1;
    const char = text[at];
    const base = { section: section!, ...(subsection !== undefined ? { subsection } : {}), key: key.toLowerCase(), line };
    if (char === undefined || char === '\n') {
      entries.push(base);
      return;
    }
    if (char !== '=') fail(`an unexpected character ${JSON.stringify(char)} after the key ${key}`);
    at += 1;
    entries.push({ ...base, value: readValue() });
  };
  while (at < text.length) {
    const char = text[at]!;
    if (char === '\n') {
      at += 1;
      line += 1;
      continue;
    }
    if (isSpace(char)) {
      at += 1;
      continue;
    }
    if (char === '#' || char === ';') {
      skipComment();
      continue;
    }
    if (char === '[') {
      readHeader();
      continue;
    }
    if (isAlpha(char)) {
      readKey();
      continue;
    }
    fail(`an unexpected character ${JSON.stringify(char)}`);
  }
  return entries;
};

/** The name git prints for an entry (`git config --list --name-only`): `section[.subsection].key`. */
export const gitConfigName = (entry: GitConfigEntry): string => `${entry.section}${entry.subsection !== undefined ? `.${entry.subsection}` : ''}.${entry.key}`;
