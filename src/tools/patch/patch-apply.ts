import type { HunkLine, PatchHunk } from './patch-parse.js';

/** One line of a file: its text (decoded, without its end), its own bytes and its line end, kept exactly. */
interface FileLine {
  text: string;
  bytes: Buffer;
  eol: Buffer;
}

/** Why a hunk did not apply, for the model: which hunk, what it expected, and the nearest lines the file has. */
export interface HunkMismatch {
  /** 1-based index of the hunk within its file's update. */
  hunk: number;
  patchLine: number;
  /** What could not be found: the hunk's lines, or one of its `@@` anchors. */
  missing: 'lines' | 'anchor';
  anchor?: string;
  expected: HunkLine[];
  /** The file's lines nearest to what the hunk expects (1-based first line number), possibly none. */
  nearest: { from: number; lines: string[] };
}

export type AppliedHunks = { ok: true; bytes: Buffer; changedLines: number[] } | { ok: false; mismatch: HunkMismatch };

const newline = Buffer.from('\n');
const crlf = Buffer.from('\r\n');
const empty = Buffer.alloc(0);

/** Split a file into lines, keeping each line's bytes and end (`\n`, `\r\n`, or none for a last line without one). */
export const splitFileLines = (bytes: Buffer): FileLine[] => {
  const lines: FileLine[] = [];
  let from = 0;
  while (from < bytes.length) {
    const at = bytes.indexOf(0x0a, from);
    if (at === -1) {
      const rest = bytes.subarray(from);
      lines.push({ text: rest.toString('utf8'), bytes: rest, eol: empty });
      break;
    }
    const carriage = at > from && bytes[at - 1] === 0x0d;
    const body = bytes.subarray(from, carriage ? at - 1 : at);
    lines.push({ text: body.toString('utf8'), bytes: body, eol: carriage ? crlf : newline });
    from = at + 1;
  }
  return lines;
};

/** Typographic punctuation and spaces models write for ASCII ones (the last, loosest comparison). */
const loosen = (text: string): string =>
  text
    .trim()
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, ' ');

/** The comparisons tried in order: exact, then ignoring trailing whitespace, then surrounding, then punctuation. */
const comparisons: ReadonlyArray<(text: string) => string> = [(text) => text, (text) => text.trimEnd(), (text) => text.trim(), loosen];

/** The first index ≥ `start` where `pattern` occurs in `lines` under the loosest comparison needed (at the end first when `atEnd`). */
const seek = (lines: readonly FileLine[], pattern: readonly string[], start: number, atEnd: boolean): number | undefined => {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return undefined;
  for (const compare of comparisons) {
    const wanted = pattern.map(compare);
    const matchesAt = (index: number) => wanted.every((text, offset) => compare(lines[index + offset]!.text) === text);
    const last = lines.length - pattern.length;
    if (atEnd && last >= start && matchesAt(last)) return last;
    for (let index = start; index <= last; index++) if (matchesAt(index)) return index;
  }
  return undefined;
};

/** The window of the file most like the expected lines (most lines equal after trimming), for a failure message. */
const nearestLines = (lines: readonly FileLine[], expected: readonly string[], start: number): { from: number; lines: string[] } => {
  if (lines.length === 0) return { from: 1, lines: [] };
  const wanted = expected.map((text) => text.trim());
  const size = Math.max(1, Math.min(wanted.length, 12));
  // Bounded work for a huge file: score by the first expected line alone.
  const compared = lines.length * wanted.length > 2_000_000 ? wanted.slice(0, 1) : wanted;
  let best = Math.min(start, lines.length - 1);
  let bestScore = -1;
  for (let index = 0; index < lines.length; index++) {
    let score = 0;
    for (let offset = 0; offset < compared.length && index + offset < lines.length; offset++) if (lines[index + offset]!.text.trim() === compared[offset]) score++;
    if (score > bestScore) {
      best = index;
      bestScore = score;
    }
  }
  if (bestScore === 0) best = Math.min(start, Math.max(0, lines.length - size));
  const from = Math.max(0, best - 1);
  return { from: from + 1, lines: lines.slice(from, Math.min(lines.length, best + size + 1)).map((line) => line.text) };
};

/**
 * Apply an update's hunks to a file's bytes, all or nothing. Each hunk is found at or after the previous one (after
 * its `@@` anchors, at the end of the file for `*** End of File`), comparing exactly, then ignoring trailing
 * whitespace, then surrounding whitespace, then typographic punctuation. Lines the hunks do not remove keep their
 * bytes (context lines included, whatever whitespace the patch gave them); added lines take the file's line end
 * (`\r\n` when its first line ends so). A hunk with no context or removed lines is added after its anchor, or at the
 * end of the file.
 */
export const applyHunks = (bytes: Buffer, hunks: readonly PatchHunk[]): AppliedHunks => {
  const lines = splitFileLines(bytes);
  const lineEnd = lines.find((line) => line.eol.length > 0)?.eol ?? newline;
  const output: Array<{ line: FileLine; added: boolean }> = [];
  let cursor = 0;
  for (const [index, hunk] of hunks.entries()) {
    let start = cursor;
    for (const anchor of hunk.anchors) {
      const found = seek(lines, [anchor], start, false);
      if (found === undefined) return { ok: false, mismatch: { hunk: index + 1, patchLine: hunk.patchLine, missing: 'anchor', anchor, expected: hunk.lines, nearest: nearestLines(lines, [anchor], start) } };
      start = found + 1;
    }
    const old = hunk.lines.filter((line) => line.kind !== 'add').map((line) => line.text);
    const at = old.length === 0 ? (hunk.anchors.length > 0 && !hunk.endOfFile ? start : lines.length) : seek(lines, old, start, hunk.endOfFile);
    if (at === undefined) return { ok: false, mismatch: { hunk: index + 1, patchLine: hunk.patchLine, missing: 'lines', expected: hunk.lines, nearest: nearestLines(lines, old, start) } };
    for (let keep = cursor; keep < at; keep++) output.push({ line: lines[keep]!, added: false });
    let position = at;
    for (const line of hunk.lines) {
      if (line.kind === 'context') output.push({ line: lines[position++]!, added: false });
      else if (line.kind === 'remove') position++;
      else output.push({ line: { text: line.text, bytes: Buffer.from(line.text, 'utf8'), eol: lineEnd }, added: true });
    }
    cursor = position;
  }
  for (let keep = cursor; keep < lines.length; keep++) output.push({ line: lines[keep]!, added: false });
  const parts: Buffer[] = [];
  const changedLines: number[] = [];
  output.forEach(({ line, added }, index) => {
    if (added) changedLines.push(index + 1);
    // A line that had no end (the file's last) gets one when a line now follows it.
    const eol = line.eol.length === 0 && index < output.length - 1 ? lineEnd : line.eol;
    parts.push(line.bytes, eol);
  });
  return { ok: true, bytes: Buffer.concat(parts), changedLines };
};

/** An added file's bytes: its lines, each ended by `\n`. */
export const addedFileBytes = (lines: readonly string[]): Buffer => Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8');

/** A mismatch as the model reads it: the hunk, what it expected, and the nearest lines of the file. */
export const mismatchText = (path: string, mismatch: HunkMismatch): string => {
  const what = mismatch.missing === 'anchor' ? `its anchor "@@ ${mismatch.anchor}" was not found` : 'its context and removed lines were not found';
  const expected = mismatch.missing === 'anchor' ? [`@@ ${mismatch.anchor}`] : mismatch.expected.filter((line) => line.kind !== 'add').map((line) => `${line.kind === 'remove' ? '-' : ' '}${line.text}`);
  const shown = expected.slice(0, 12).map((line) => `  ${line}`);
  if (expected.length > 12) shown.push(`  … (${expected.length - 12} more lines)`);
  const near = mismatch.nearest.lines.map((line, offset) => `  ${mismatch.nearest.from + offset} | ${line}`);
  return [
    `hunk ${mismatch.hunk} of ${path} (patch line ${mismatch.patchLine}) does not match the file: ${what} (after the previous hunk). Nothing was changed.`,
    'The hunk expects:',
    ...shown,
    near.length > 0 ? `The nearest lines in ${path} (from line ${mismatch.nearest.from}):` : `${path} is empty.`,
    ...near,
    'Read the file again and send the whole patch with context and "-" lines copied exactly from it.',
  ].join('\n');
};
