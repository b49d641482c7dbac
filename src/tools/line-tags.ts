import { blake3LineTag } from '../util/line-hash.js';

/** The 8-hex-character tag of a line: BLAKE3 of `"<line_no>:<text>"`. Edits quote it to anchor a line. */
export const lineTag = (lineNumber: number, text: string): string => blake3LineTag(lineNumber, text);

/** A file's content as lines, remembering whether it ended with a newline (which `read` does not show as a line). */
export interface FileLines {
  lines: string[];
  trailingNewline: boolean;
}

/** Split content on `\n` (a `\r` stays part of its line, so tags see exactly the file's bytes). */
export const splitLines = (content: string): FileLines => {
  if (content.length === 0) return { lines: [], trailingNewline: false };
  const trailingNewline = content.endsWith('\n');
  return { lines: (trailingNewline ? content.slice(0, -1) : content).split('\n'), trailingNewline };
};

/** The inverse of `splitLines`. */
export const joinLines = ({ lines, trailingNewline }: FileLines): string => (lines.length === 0 ? '' : lines.join('\n') + (trailingNewline ? '\n' : ''));

/** Render lines as `<line_no> <tag> | <text>`, numbering from `firstLine`. */
export const renderTaggedLines = (lines: readonly string[], firstLine: number): string => renderTaggedPage(lines, firstLine, Number.POSITIVE_INFINITY).text;

/**
 * Render as many lines as fit in `budget` characters (always at least one), tagging only those: returns the text
 * and how many lines it holds.
 */
export const renderTaggedPage = (lines: readonly string[], firstLine: number, budget: number): { text: string; count: number } => {
  let rendered = '';
  let index = 0;
  for (; index < lines.length; index++) {
    const lineNumber = firstLine + index;
    const text = lines[index]!;
    const line = `${index === 0 ? '' : '\n'}${lineNumber} ${lineTag(lineNumber, text)} | ${text}`;
    if (index > 0 && rendered.length + line.length > budget) break;
    rendered += line;
  }
  return { text: rendered, count: index };
};
