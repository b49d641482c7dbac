/**
 * `text` as one word a POSIX shell reads back unchanged, for a command rein prints for a person to paste (`rein
 * resume <id> --approve 'bash:rm -f \*'`): bare when it holds only characters no shell treats specially, in single
 * quotes otherwise (nothing inside them expands: `$HOME`, backticks, `\` and `*` stay as they are). Text holding a
 * control or bidirectional-override character is written as `$'…'` (bash, zsh, ksh) with those characters escaped,
 * so the printed line neither rewrites the terminal nor breaks across lines, and pastes back as the same text.
 */
export const shellWord = (text: string): string => {
  if (/^[\w./@:+=,%-]+$/.test(text)) return text;
  // eslint-disable-next-line no-control-regex
  const unprintable = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  if (!unprintable.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  const escaped = text.replace(/[\\']/g, '\\$&').replace(unprintable, (character) => {
    const named: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };
    const code = character.charCodeAt(0);
    return named[character] ?? (code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
  });
  return `$'${escaped}'`;
};
