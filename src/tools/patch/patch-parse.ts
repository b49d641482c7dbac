/*
 * The patch format OpenAI's models are trained on (`apply_patch`): an envelope of file operations.
 *
 *   *** Begin Patch
 *   *** Add File: <path>          every following line is "+<text>"
 *   *** Delete File: <path>
 *   *** Update File: <path>
 *   *** Move to: <new path>       optional, right after Update File
 *   @@ <optional anchor>          a hunk; lines start with " " (context), "-" (removed) or "+" (added)
 *   *** End of File               optional: the hunk ends at the end of the file
 *   *** End Patch
 *
 * Lenient where models are known to drift: a heredoc wrapper (<<'EOF' … EOF), whitespace around the envelope
 * markers, CRLF line ends, an empty line inside a hunk (an empty context line), the first hunk of an update without
 * its "@@", and a unified-diff range (`@@ -3,7 +3,8 @@`) as an anchor (ignored).
 */

/** One line of a hunk: kept (`context`), removed or added, with its text (without the one-character prefix). */
export interface HunkLine {
  kind: 'context' | 'remove' | 'add';
  text: string;
}

/** One hunk of an update: the lines it replaces (context and removed) by the lines it leaves (context and added). */
export interface PatchHunk {
  /** `@@ <anchor>` lines before it, in order: each is found at or after the previous one before the hunk is. */
  anchors: string[];
  lines: HunkLine[];
  /** `*** End of File` closed it: it must match at the end of the file. */
  endOfFile: boolean;
  /** 1-based line of the patch text where the hunk starts (named in failures). */
  patchLine: number;
}

export type PatchOperation =
  | { kind: 'add'; path: string; lines: string[]; patchLine: number }
  | { kind: 'delete'; path: string; patchLine: number }
  | { kind: 'update'; path: string; moveTo?: string; hunks: PatchHunk[]; patchLine: number };

export type ParsedPatch = { ok: true; operations: PatchOperation[] } | { ok: false; message: string };

const begin = '*** Begin Patch';
const end = '*** End Patch';
const addHeader = '*** Add File: ';
const deleteHeader = '*** Delete File: ';
const updateHeader = '*** Update File: ';
const moveHeader = '*** Move to: ';
const endOfFile = '*** End of File';
/** A unified-diff range header used as an anchor: it says nothing about the text, so it is ignored. */
const unifiedRange = /^-\d+(,\d+)? \+\d+(,\d+)? @@/;

const failure = (message: string): ParsedPatch => ({ ok: false, message });

/** The patch's lines between its markers (with their 1-based line numbers), or why there is no envelope. */
const envelope = (text: string): { lines: Array<{ text: string; number: number }> } | { message: string } => {
  const all = text.replace(/\r\n/g, '\n').split('\n').map((line, index) => ({ text: line, number: index + 1 }));
  let first = all.findIndex((line) => line.text.trim() !== '');
  let last = all.findLastIndex((line) => line.text.trim() !== '');
  if (first === -1) return { message: 'the patch is empty: it must start with "*** Begin Patch" and end with "*** End Patch"' };
  // A heredoc wrapper, as a shell command line would carry it.
  const heredoc = /^<<\s*['"]?([A-Za-z_]+)['"]?\s*$/.exec(all[first]!.text.trim());
  if (heredoc && last > first && all[last]!.text.trim() === heredoc[1]) {
    first = all.findIndex((line, index) => index > first && line.text.trim() !== '');
    last = all.findLastIndex((line, index) => index < last && line.text.trim() !== '');
    if (first === -1 || last < first) return { message: 'the patch is empty inside its heredoc' };
  }
  if (all[first]!.text.trim() !== begin) return { message: `the patch must start with "${begin}" (line ${all[first]!.number} is ${JSON.stringify(all[first]!.text.slice(0, 60))})` };
  if (last === first || all[last]!.text.trim() !== end) return { message: `the patch must end with "${end}"` };
  return { lines: all.slice(first + 1, last) };
};

const pathOf = (line: string, header: string): string => line.slice(header.length).trim();

/**
 * Parse a patch into file operations, or say (for the model) what is malformed and where. Checks the grammar only:
 * whether the hunks match the files is the applier's question.
 */
export const parsePatch = (text: string): ParsedPatch => {
  const framed = envelope(text);
  if ('message' in framed) return failure(framed.message);
  const operations: PatchOperation[] = [];
  let hunk: PatchHunk | undefined;
  const closeHunk = (operation: PatchOperation | undefined): string | undefined => {
    if (!hunk || operation?.kind !== 'update') return undefined;
    if (hunk.lines.length === 0) return `line ${hunk.patchLine}: the hunk of ${operation.path} has no lines`;
    operation.hunks.push(hunk);
    hunk = undefined;
    return undefined;
  };
  for (const { text: raw, number } of framed.lines) {
    const line = raw.trimEnd();
    const current = operations[operations.length - 1];
    if (line.startsWith('*** ') && line !== endOfFile) {
      const unclosed = closeHunk(current);
      if (unclosed) return failure(unclosed);
      if (current?.kind === 'update' && current.hunks.length === 0 && !`${line} `.startsWith(moveHeader)) return failure(`line ${current.patchLine}: "*** Update File: ${current.path}" has no hunks`);
      // Padded by one space: a header whose path is missing still reads as that header ("names no path").
      const header = `${line} `;
      if (header.startsWith(addHeader)) operations.push({ kind: 'add', path: pathOf(header, addHeader), lines: [], patchLine: number });
      else if (header.startsWith(deleteHeader)) operations.push({ kind: 'delete', path: pathOf(header, deleteHeader), patchLine: number });
      else if (header.startsWith(updateHeader)) operations.push({ kind: 'update', path: pathOf(header, updateHeader), hunks: [], patchLine: number });
      else if (header.startsWith(moveHeader)) {
        if (current?.kind !== 'update' || current.hunks.length > 0 || current.moveTo !== undefined) return failure(`line ${number}: "*** Move to:" must follow "*** Update File:" directly`);
        current.moveTo = pathOf(header, moveHeader);
        if (current.moveTo === '') return failure(`line ${number}: "*** Move to:" names no path`);
      } else return failure(`line ${number}: unknown header ${JSON.stringify(line.slice(0, 60))}; use *** Add File:, *** Delete File:, *** Update File: or *** Move to:`);
      const added = operations[operations.length - 1];
      if (added && added !== current && added.path === '') return failure(`line ${number}: the header names no path`);
      continue;
    }
    if (!current) return failure(`line ${number}: expected a file header (*** Add File:, *** Delete File: or *** Update File:) before ${JSON.stringify(line.slice(0, 60))}`);
    if (current.kind === 'add') {
      if (!raw.startsWith('+')) return failure(`line ${number}: every line of an added file starts with "+" (${current.path})`);
      current.lines.push(raw.slice(1));
      continue;
    }
    if (current.kind === 'delete') {
      if (line === '') continue;
      return failure(`line ${number}: nothing may follow "*** Delete File: ${current.path}"`);
    }
    if (line === endOfFile) {
      if (!hunk || hunk.lines.length === 0) return failure(`line ${number}: "${endOfFile}" must close a hunk`);
      hunk.endOfFile = true;
      const unclosed = closeHunk(current);
      if (unclosed) return failure(unclosed);
      continue;
    }
    if (line.startsWith('@@')) {
      if (hunk && hunk.lines.length > 0) closeHunk(current);
      hunk ??= { anchors: [], lines: [], endOfFile: false, patchLine: number };
      const anchor = line.slice(2).trim();
      if (anchor !== '' && !unifiedRange.test(anchor)) hunk.anchors.push(anchor);
      continue;
    }
    hunk ??= { anchors: [], lines: [], endOfFile: false, patchLine: number };
    // An empty line is an empty context line (models drop the lone space); otherwise the prefix says what it is.
    if (raw === '' || raw === '\r') hunk.lines.push({ kind: 'context', text: '' });
    else if (raw.startsWith(' ')) hunk.lines.push({ kind: 'context', text: raw.slice(1) });
    else if (raw.startsWith('-')) hunk.lines.push({ kind: 'remove', text: raw.slice(1) });
    else if (raw.startsWith('+')) hunk.lines.push({ kind: 'add', text: raw.slice(1) });
    else return failure(`line ${number}: a hunk line starts with " " (context), "-" (removed) or "+" (added), got ${JSON.stringify(raw.slice(0, 60))}`);
  }
  const last = operations[operations.length - 1];
  const unclosed = closeHunk(last);
  if (unclosed) return failure(unclosed);
  if (last?.kind === 'update' && last.hunks.length === 0) return failure(`line ${last.patchLine}: "*** Update File: ${last.path}" has no hunks`);
  if (operations.length === 0) return failure('the patch names no file: it changes nothing');
  const named = new Map<string, number>();
  for (const operation of operations) {
    for (const path of operation.kind === 'update' && operation.moveTo !== undefined ? [operation.path, operation.moveTo] : [operation.path]) {
      const earlier = named.get(path);
      if (earlier !== undefined) return failure(`line ${operation.patchLine}: ${path} is named again (first at line ${earlier}); change each file once per patch`);
      named.set(path, operation.patchLine);
    }
  }
  return { ok: true, operations };
};
