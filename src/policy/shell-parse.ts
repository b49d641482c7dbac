/** One simple command of a shell line: its words (quotes removed) and its redirections. */
export interface ShellSegment {
  words: string[];
  redirects: Array<{ operator: string; target: string }>;
  /**
   * Per word: whether the shell expands something in it (a `$` or a backquote outside single quotes), so that its
   * `$` is the shell's — not text a program reads, as in `awk '{print $NF}'`.
   */
  expanding: boolean[];
}

/** A shell line split into simple commands joined by operators (`&&`, `||`, `;`, `|`, `|&`, `&`), or why it could not be. */
export type ShellParse = { ok: true; segments: ShellSegment[]; operators: string[] } | { ok: false; reason: string };

const separators = ['&&', '||', '|&', ';', '|', '&'];
const redirectPattern = /^(\d*|&)(>>|>&|>\||<>|<<<|<<|>|<)/;

interface Cursor {
  text: string;
  index: number;
  /** When set (see `ParseOptions.substitutions`), the bodies of command substitutions are collected here instead of failing the parse. */
  substitutions?: string[];
}

/**
 * How far the parser goes. By default anything that can hide a command fails the parse (the classifier's rule).
 * With `groups`, subshells and groups are read as the commands they hold, here-document bodies are skipped as data,
 * and with `substitutions` the bodies of `$(…)`, backticks and `<(…)` are collected (the word keeps a `$` where the
 * substitution was) — what deny-rule matching needs to see every command a line runs.
 */
export interface ParseOptions {
  groups?: boolean;
  substitutions?: string[];
}

/** Read a balanced `(…)` body starting just after its `(`; undefined when it never closes. */
const balanced = (cursor: Cursor): string | undefined => {
  const { text } = cursor;
  const start = cursor.index;
  let depth = 1;
  while (cursor.index < text.length) {
    const character = text[cursor.index]!;
    if (character === '\\') cursor.index += 2;
    else if (character === "'") {
      const end = text.indexOf("'", cursor.index + 1);
      if (end === -1) return undefined;
      cursor.index = end + 1;
    } else if (character === '"') {
      cursor.index++;
      while (cursor.index < text.length && text[cursor.index] !== '"') cursor.index += text[cursor.index] === '\\' ? 2 : 1;
      cursor.index++;
    } else {
      if (character === '(') depth++;
      if (character === ')') depth--;
      cursor.index++;
      if (depth === 0) return text.slice(start, cursor.index - 1);
    }
  }
  return undefined;
};

/** Collect a substitution's body at the cursor (`$(`, `` ` ``, `<(`, `>(`); false when it cannot be read. */
const substitution = (cursor: Cursor): boolean => {
  const { text } = cursor;
  if (text[cursor.index] === '`') {
    let end = cursor.index + 1;
    while (end < text.length && text[end] !== '`') end += text[end] === '\\' ? 2 : 1;
    if (end >= text.length) return false;
    cursor.substitutions!.push(text.slice(cursor.index + 1, end).replace(/\\([`$\\])/g, '$1'));
    cursor.index = end + 1;
    return true;
  }
  cursor.index += 2;
  const body = balanced(cursor);
  if (body === undefined) return false;
  cursor.substitutions!.push(body);
  return true;
};

/** Read a quoted or plain word starting at the cursor; returns undefined when the text hides a command. */
const readWord = (cursor: Cursor): { word: string; expands: boolean } | { reason: string } => {
  let word = '';
  let expands = false;
  const { text } = cursor;
  while (cursor.index < text.length) {
    const character = text[cursor.index]!;
    if (/[\s;&|<>()]/.test(character)) break;
    if (cursor.substitutions && (character === '`' || (character === '$' && text[cursor.index + 1] === '('))) {
      if (!substitution(cursor)) return { reason: 'an unterminated command substitution' };
      word += '$';
      expands = true;
      continue;
    }
    if (character === '$') expands = true;
    if (character === '`') return { reason: 'command substitution' };
    if (character === '$' && (text[cursor.index + 1] === '(' || text[cursor.index + 1] === '[')) return { reason: 'command substitution' };
    if (character === '\\') {
      if (cursor.index + 1 >= text.length) return { reason: 'a trailing backslash' };
      if (text[cursor.index + 1] !== '\n') word += text[cursor.index + 1];
      cursor.index += 2;
    } else if (character === "'") {
      const end = text.indexOf("'", cursor.index + 1);
      if (end === -1) return { reason: 'an unterminated quote' };
      word += text.slice(cursor.index + 1, end);
      cursor.index = end + 1;
    } else if (character === '"') {
      cursor.index++;
      let closed = false;
      while (cursor.index < text.length) {
        const inner = text[cursor.index]!;
        if (inner === '"') {
          closed = true;
          cursor.index++;
          break;
        }
        if (cursor.substitutions && (inner === '`' || (inner === '$' && text[cursor.index + 1] === '('))) {
          if (!substitution(cursor)) return { reason: 'an unterminated command substitution' };
          word += '$';
          expands = true;
          continue;
        }
        if (inner === '$') expands = true;
        if (inner === '`' || (inner === '$' && (text[cursor.index + 1] === '(' || text[cursor.index + 1] === '['))) return { reason: 'command substitution' };
        if (inner === '\\' && cursor.index + 1 < text.length && '"\\$`\n'.includes(text[cursor.index + 1]!)) {
          word += text[cursor.index + 1];
          cursor.index += 2;
        } else {
          word += inner;
          cursor.index++;
        }
      }
      if (!closed) return { reason: 'an unterminated quote' };
    } else {
      word += character;
      cursor.index++;
    }
  }
  return { word, expands };
};

/**
 * Split a shell line into simple commands. This is a risk heuristic, not a shell: anything that can hide a
 * command (command or process substitution, subshells, groups, here-documents, unbalanced quotes) makes the line
 * unparseable, and an unparseable line is never allowed automatically.
 */
export const parseShell = (command: string, options: ParseOptions = {}): ShellParse => {
  const cursor: Cursor = { text: command, index: 0, ...(options.substitutions ? { substitutions: options.substitutions } : {}) };
  const groups = options.groups === true;
  const segments: ShellSegment[] = [];
  const operators: string[] = [];
  /** Here-documents whose bodies start at the next line: their delimiters, and whether leading tabs are stripped. */
  const heredocs: Array<{ delimiter: string; tabs: boolean }> = [];
  let current: ShellSegment = { words: [], redirects: [], expanding: [] };
  const close = (operator: string): string | undefined => {
    if (current.words.length === 0 && groups) {
      current = { words: [], redirects: [], expanding: [] };
      return undefined;
    }
    if (current.words.length === 0) return `an empty command before ${JSON.stringify(operator)}`;
    segments.push(current);
    operators.push(operator);
    current = { words: [], redirects: [], expanding: [] };
    return undefined;
  };
  while (cursor.index < command.length) {
    const character = command[cursor.index]!;
    if (character === ' ' || character === '\t') {
      cursor.index++;
      continue;
    }
    if (character === '\n') {
      cursor.index++;
      if (current.words.length > 0) close(';');
      // Here-document bodies are data: skip each up to its delimiter line (to the end when it never comes, as bash does).
      for (const { delimiter, tabs } of heredocs.splice(0)) {
        for (;;) {
          if (cursor.index >= command.length) break;
          const end = command.indexOf('\n', cursor.index);
          const line = command.slice(cursor.index, end === -1 ? command.length : end);
          cursor.index = end === -1 ? command.length : end + 1;
          if ((tabs ? line.replace(/^\t+/, '') : line) === delimiter) break;
        }
      }
      continue;
    }
    if (character === '#') {
      const end = command.indexOf('\n', cursor.index);
      cursor.index = end === -1 ? command.length : end;
      continue;
    }
    if (character === '(' || character === ')') {
      if (!groups) return { ok: false, reason: 'a subshell' };
      cursor.index++;
      if (current.words.length > 0) close(';');
      continue;
    }
    const rest = command.slice(cursor.index);
    const redirect = redirectPattern.exec(rest);
    if (redirect && !(redirect[1] === '&' && redirect[2] === '&')) {
      const operator = redirect[0];
      const heredoc = operator.endsWith('<<') && !operator.endsWith('<<<');
      if (operator.endsWith('<<') && !groups) return { ok: false, reason: 'a here-document' };
      cursor.index += operator.length;
      const tabs = heredoc && command[cursor.index] === '-';
      if (tabs) cursor.index++;
      if (command[cursor.index] === '(' && cursor.substitutions) {
        cursor.index--;
        if (!substitution(cursor)) return { ok: false, reason: 'an unterminated process substitution' };
        continue;
      }
      if (command[cursor.index] === '(') return { ok: false, reason: 'process substitution' };
      while (command[cursor.index] === ' ' || command[cursor.index] === '\t') cursor.index++;
      const target = readWord(cursor);
      if ('reason' in target) return { ok: false, reason: target.reason };
      if (target.word === '') return { ok: false, reason: `a redirection without a target` };
      current.redirects.push({ operator, target: target.word });
      if (heredoc) heredocs.push({ delimiter: target.word, tabs });
      continue;
    }
    const separator = separators.find((candidate) => rest.startsWith(candidate));
    if (separator) {
      cursor.index += separator.length;
      const problem = close(separator);
      if (problem) return { ok: false, reason: problem };
      continue;
    }
    const word = readWord(cursor);
    if ('reason' in word) return { ok: false, reason: word.reason };
    if ((word.word === '{' || word.word === '}') && groups && current.words.length === 0) continue;
    if (word.word === '{' || word.word === '}') return { ok: false, reason: 'a command group' };
    current.words.push(word.word);
    current.expanding.push(word.expands);
  }
  if (current.words.length > 0) {
    segments.push(current);
  } else if (operators.length > 0 && operators[operators.length - 1] !== ';' && operators[operators.length - 1] !== '&') {
    return { ok: false, reason: `a dangling ${JSON.stringify(operators[operators.length - 1])}` };
  }
  if (segments.length === 0) return { ok: false, reason: 'an empty command' };
  return { ok: true, segments, operators };
};
