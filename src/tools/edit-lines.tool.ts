import * as z from 'zod';
import { checkEditResume, commitEdit, loadForEdit, preparedEdit, type EditPlan } from './edit-commit.js';
import { lineTag } from './line-tags.js';
import { defineTool, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

const Tag = lazySchema(() => z.string().regex(/^[0-9a-f]{8}$/, 'a tag is the 8 hex characters read shows after the line number'));

export const LineOperation = lazySchema(() => z.discriminatedUnion('op', [
  z.object({ op: z.literal('replace_line'), tag: Tag, new_text: z.string() }).strict(),
  z.object({ op: z.literal('insert_after'), tag: Tag, new_text: z.string() }).strict(),
  z.object({ op: z.literal('delete_line'), tag: Tag }).strict(),
]));
export type LineOperation = z.infer<typeof LineOperation>;

export const EditLinesParameters = lazySchema(() => z
  .object({
    path: z.string().min(1),
    ops: z.array(LineOperation).min(1).max(200),
  })
  .strict());
export type EditLinesParameters = z.infer<typeof EditLinesParameters>;

/** One line of a file: its bytes as they are on disk, and the text read shows (and its tag hashes). */
interface Line {
  bytes: Buffer;
  text: string;
}

/** Split a file's bytes on `\n`, keeping each line's bytes (whatever their encoding) and whether a newline ended the file. */
const splitByteLines = (bytes: Buffer): { lines: Line[]; trailingNewline: boolean } => {
  if (bytes.length === 0) return { lines: [], trailingNewline: false };
  const trailingNewline = bytes[bytes.length - 1] === 0x0a;
  const body = trailingNewline ? bytes.subarray(0, -1) : bytes;
  const lines: Line[] = [];
  let from = 0;
  for (let at = body.indexOf(0x0a); ; at = body.indexOf(0x0a, from)) {
    const slice = body.subarray(from, at === -1 ? body.length : at);
    lines.push({ bytes: slice, text: slice.toString('utf8') });
    if (at === -1) break;
    from = at + 1;
  }
  return { lines, trailingNewline };
};

const joinByteLines = (lines: readonly Line[], trailingNewline: boolean): Buffer => {
  if (lines.length === 0) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  lines.forEach((line, index) => parts.push(...(index > 0 ? [Buffer.from([0x0a])] : []), line.bytes));
  if (trailingNewline) parts.push(Buffer.from([0x0a]));
  return Buffer.concat(parts);
};

const linesOf = (text: string): Line[] => text.split('\n').map((part) => ({ bytes: Buffer.from(part, 'utf8'), text: part }));

/** Indices of the current lines whose tag is `tag`. */
const find = (lines: readonly Line[], tag: string): number[] => {
  const found: number[] = [];
  for (let index = 0; index < lines.length; index++) if (lineTag(index + 1, lines[index]!.text) === tag) found.push(index);
  return found;
};

/**
 * Hash-anchored line edits: each operation names a line by the tag `read` showed for it. Operations apply in
 * order and each re-hashes the lines, so later tags must describe the file as the earlier operations left it. A tag
 * that matches no current line rejects the whole request and the file is left untouched. The result shows the new
 * content with fresh tags. Lines are kept as bytes, so the lines no operation touches are written back byte for
 * byte even in a file that is not valid UTF-8.
 */
export const editLinesTool = defineTool<EditLinesParameters, EditPlan>({
  name: 'edit_lines',
  description: 'Edit lines by the tags read shows. new_text may span several lines. Ops apply in order, each to the file the previous one left (tags re-hashed); a stale tag rejects the whole request.',
  parameters: EditLinesParameters,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false, requiresConfirmation: false },
  risk: 'write',
  sideEffect: 'workspace-write',
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    const file = await loadForEdit(context, args.path, false);
    if (!('content' in file)) return file;
    // Lines keep their bytes: a line no operation touches is written back exactly, UTF-8 or not.
    const shape = splitByteLines(Buffer.from(file.bytes));
    const lines = [...shape.lines];
    const changed: number[] = [];
    for (const [position, operation] of args.ops.entries()) {
      const matches = find(lines, operation.tag);
      if (matches.length === 0) return toolFailure('InvalidInput', `ops[${position}] (${operation.op}): tag ${operation.tag} matches no current line of ${file.relative}; nothing was changed — read the file again for fresh tags`, 'stale_tag');
      if (matches.length > 1) return toolFailure('InvalidInput', `ops[${position}]: tag ${operation.tag} matches ${matches.length} lines; nothing was changed — read the file again`, 'ambiguous_target');
      const index = matches[0]!;
      if (operation.op === 'delete_line') {
        lines.splice(index, 1);
        changed.push(Math.max(1, index));
      } else if (operation.op === 'replace_line') {
        lines.splice(index, 1, ...linesOf(operation.new_text));
        changed.push(index + 1);
      } else {
        lines.splice(index + 1, 0, ...linesOf(operation.new_text));
        changed.push(index + 2);
      }
    }
    const bytes = joinByteLines(lines, shape.trailingNewline);
    if (bytes.equals(Buffer.from(file.bytes))) return toolFailure('InvalidInput', 'the operations leave the file unchanged', 'no_op');
    return preparedEdit({ target: file.target, relative: file.relative, before: file.hash, bytes, changedLines: changed });
  },
  execute(args, context, plan) {
    return commitEdit(context, plan, `edited ${plan.relative}: applied ${args.ops.length} line operation${args.ops.length === 1 ? '' : 's'}`);
  },
  checkResume: (intent, { workspace }) => checkEditResume(intent, workspace),
});
