/**
 * Text from a model, a tool, a file or a server, made safe to print on a terminal: every control character (C0 but
 * the line breaks and tabs `keep` allows, DEL, C1) and every bidirectional-override character is shown as an escape
 * (`\x1b`, `\r`, `\u202e`), so an `ESC[2K` or a carriage return cannot erase or rewrite what a person reads — an
 * approval question shows the command that will run, a trust question the command that will start.
 */
export const terminalText = (text: string, keep: { newlines?: boolean } = {}): string =>
  // eslint-disable-next-line no-control-regex
  text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (character) => {
    if (character === '\n' && keep.newlines) return character;
    return escapes[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });

const escapes: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\u001b': '\\x1b', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\u0000': '\\0', '\u0007': '\\a', '\u007f': '\\x7f' };

/** `value` with every string in it (deeply, keys included) passed through `terminalText`; other values as they are. */
export const terminalSafe = <T>(value: T, keep: { newlines?: boolean } = {}): T => {
  if (typeof value === 'string') return terminalText(value, keep) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => terminalSafe(item, keep)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[terminalText(key, keep)] = terminalSafe(item, keep);
  return copy as T;
};
