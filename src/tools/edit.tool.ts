import * as z from 'zod';
import type { InputRepair } from '../../models/tool.records.js';
import { checkEditResume, commitEdit, invalidUtf8Line, loadForEdit, preparedEdit, type EditPlan } from './edit-commit.js';
import { defineTool, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const EditParameters = lazySchema(() => z
  .object({
    path: z.string().min(1),
    old_string: z.string().min(1),
    new_string: z.string(),
    replace_all: z.boolean().optional().describe('Replace every occurrence'),
  })
  .strict());
export type EditParameters = z.infer<typeof EditParameters>;

/** Non-overlapping occurrences of `needle`'s UTF-8 bytes in `bytes`. */
const count = (bytes: Buffer, needle: string): number => {
  const pattern = Buffer.from(needle, 'utf8');
  let found = 0;
  for (let at = bytes.indexOf(pattern); at !== -1; at = bytes.indexOf(pattern, at + pattern.length)) found++;
  return found;
};

/** `bytes` with the first (or every) occurrence of `needle` replaced; everything else byte for byte. */
const replaceBytes = (bytes: Buffer, needle: string, replacement: string, all: boolean): { bytes: Buffer; first: number } => {
  const pattern = Buffer.from(needle, 'utf8');
  const insert = Buffer.from(replacement, 'utf8');
  const first = bytes.indexOf(pattern);
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = first; at !== -1; at = all ? bytes.indexOf(pattern, at + pattern.length) : -1) {
    parts.push(bytes.subarray(from, at), insert);
    from = at + pattern.length;
  }
  parts.push(bytes.subarray(from));
  return { bytes: Buffer.concat(parts), first };
};

/** `\n`, `\"`, `\t`… as the characters they stand for, or undefined when the text is not a JSON-escaped string. */
const unescapeJson = (text: string): string | undefined => {
  if (!text.includes('\\')) return undefined;
  try {
    const value: unknown = JSON.parse(`"${text.replace(/(?<!\\)((?:\\\\)*)"/g, '$1\\"')}"`);
    return typeof value === 'string' && value !== text ? value : undefined;
  } catch {
    return undefined;
  }
};

/** True when the file ends every line with CRLF: it has line breaks, and every `\n` follows a `\r`. */
const usesCrlf = (bytes: Buffer): boolean => {
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) {
    if (at === 0 || bytes[at - 1] !== 0x0d) return false;
    lines++;
  }
  return lines > 0;
};

/** `text` with every bare `\n` written as `\r\n` (a `\r\n` already there stays one). */
const toCrlf = (text: string): string => text.replace(/\r?\n/g, '\r\n');

const lineOf = (bytes: Buffer, index: number): number => {
  let line = 1;
  for (let at = bytes.indexOf(0x0a); at !== -1 && at < index; at = bytes.indexOf(0x0a, at + 1)) line++;
  return line;
};

/**
 * Exact-match edit: `old_string` must occur in the file exactly as given (whitespace included), once — or any
 * number of times with `replace_all`. The file must have been read in this session and be unchanged since. A
 * JSON-escaped `old_string` (e.g. `\n` for a newline) is repaired only when the unescaped text then matches
 * uniquely; `new_string` is unescaped with it. Not found, ambiguous and stale are `InvalidInput`. Matching and
 * replacing work on the file's bytes, so a file that is not valid UTF-8 keeps every byte the edit does not touch;
 * an `old_string` quoting U+FFFD (how read shows undecodable bytes) is refused as `invalid_encoding`.
 */
export const editTool = defineTool<EditParameters, EditPlan>({
  name: 'edit',
  description: 'Replace exact text in a file you have read: old_string must match exactly (whitespace included) and occur once, unless replace_all is true.',
  parameters: EditParameters,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false, requiresConfirmation: false },
  risk: 'write',
  sideEffect: 'workspace-write',
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    const file = await loadForEdit(context, args.path, true);
    if (!('content' in file)) return file;
    const bytes = Buffer.from(file.bytes);
    let oldString = args.old_string;
    let newString = args.new_string;
    const repairs: InputRepair[] = [];
    let found = count(bytes, oldString);
    if (found === 0) {
      const unescaped = unescapeJson(oldString);
      if (unescaped !== undefined && count(bytes, unescaped) === 1) {
        oldString = unescaped;
        found = 1;
        repairs.push({ field: 'old_string', kind: 'json-unescape' });
        const newUnescaped = unescapeJson(newString);
        if (newUnescaped !== undefined) {
          newString = newUnescaped;
          repairs.push({ field: 'new_string', kind: 'json-unescape' });
        }
      }
    }
    // A file that ends every line with CRLF, an old_string over several lines written with `\n` (as read shows them):
    // the same lines. Both strings take the file's line endings, and the repair is recorded.
    if (found === 0 && oldString.includes('\n') && !oldString.includes('\r') && usesCrlf(bytes)) {
      const crlf = toCrlf(oldString);
      const matches = count(bytes, crlf);
      if (matches > 0) {
        oldString = crlf;
        newString = toCrlf(newString);
        found = matches;
        repairs.push({ field: 'old_string', kind: 'crlf-line-endings' }, { field: 'new_string', kind: 'crlf-line-endings' });
      }
    }
    const badLine = found === 0 && oldString.includes('\uFFFD') ? invalidUtf8Line(bytes) : undefined;
    if (badLine !== undefined) {
      return toolFailure('InvalidInput', `${file.relative} is not valid UTF-8 (from line ${badLine}): read shows bytes it cannot decode as U+FFFD, and old_string quotes one, which cannot match those bytes — edit the text around them, or replace whole lines with edit_lines`, 'invalid_encoding');
    }
    if (found === 0) return toolFailure('InvalidInput', `old_string was not found in ${file.relative}; it must match exactly, including whitespace and indentation — read the file again`, 'old_string_not_found');
    if (found > 1 && !args.replace_all) return toolFailure('InvalidInput', `old_string occurs ${found} times in ${file.relative}; add surrounding context to make it unique, or set replace_all`, 'ambiguous_target');
    if (oldString === newString) return toolFailure('InvalidInput', 'old_string and new_string are the same; the edit would change nothing', 'no_op');
    // Bytes, not decoded text: a file that is not UTF-8 keeps every byte the edit does not replace.
    const edited = replaceBytes(bytes, oldString, newString, args.replace_all ?? false);
    return preparedEdit({ target: file.target, relative: file.relative, before: file.hash, bytes: edited.bytes, changedLines: [lineOf(edited.bytes, edited.first)] }, repairs);
  },
  execute(args, context, plan) {
    const occurrences = args.replace_all ? 'every occurrence' : 'one occurrence';
    return commitEdit(context, plan, `edited ${plan.relative}: replaced ${occurrences}`);
  },
  checkResume: (intent, { workspace }) => checkEditResume(intent, workspace),
});
