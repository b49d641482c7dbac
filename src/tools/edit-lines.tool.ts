import { z } from 'zod';
import { checkEditResume, commitEdit, loadForEdit, preparedEdit, type EditPlan } from './edit-commit.js';
import { joinLines, lineTag, splitLines } from './line-tags.js';
import { defineTool, toolFailure } from './tool.js';

const Tag = z.string().regex(/^[0-9a-f]{8}$/, 'a tag is the 8 hex characters read shows after the line number');

export const LineOperation = z.discriminatedUnion('op', [
  z.object({ op: z.literal('replace_line'), tag: Tag, new_text: z.string().describe('Replacement text; may span several lines') }).strict(),
  z.object({ op: z.literal('insert_after'), tag: Tag, new_text: z.string().describe('Text to insert after the tagged line; may span several lines') }).strict(),
  z.object({ op: z.literal('delete_line'), tag: Tag }).strict(),
]);
export type LineOperation = z.infer<typeof LineOperation>;

export const EditLinesParameters = z
  .object({
    path: z.string().min(1).describe('File path, relative to the workspace root'),
    ops: z.array(LineOperation).min(1).max(200).describe('Operations applied in order; each one sees the file as the previous ones left it (tags re-hashed)'),
  })
  .strict();
export type EditLinesParameters = z.infer<typeof EditLinesParameters>;

/** Indices of the current lines whose tag is `tag`. */
const find = (lines: readonly string[], tag: string): number[] => {
  const found: number[] = [];
  for (let index = 0; index < lines.length; index++) if (lineTag(index + 1, lines[index]!) === tag) found.push(index);
  return found;
};

/**
 * Hash-anchored line edits: each operation names a line by the tag `read` showed for it. Operations apply in
 * order and each re-hashes the lines, so later tags must describe the file as the earlier operations left it. A tag
 * that matches no current line rejects the whole request and the file is left untouched. The result shows the new
 * content with fresh tags.
 */
export const editLinesTool = defineTool<EditLinesParameters, EditPlan>({
  name: 'edit_lines',
  description: 'Edit lines by the tags read shows (`<line_no> <tag> | <text>`): replace_line, insert_after, delete_line. Ops apply in order and tags are re-hashed after each op; a stale tag rejects the whole request.',
  parameters: EditLinesParameters,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false, requiresConfirmation: false },
  risk: 'write',
  sideEffect: 'workspace-write',
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    const file = await loadForEdit(context, args.path, false);
    if (!('content' in file)) return file;
    const shape = splitLines(file.content);
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
        lines.splice(index, 1, ...operation.new_text.split('\n'));
        changed.push(index + 1);
      } else {
        lines.splice(index + 1, 0, ...operation.new_text.split('\n'));
        changed.push(index + 2);
      }
    }
    const content = joinLines({ lines, trailingNewline: shape.trailingNewline });
    if (content === file.content) return toolFailure('InvalidInput', 'the operations leave the file unchanged', 'no_op');
    return preparedEdit({ target: file.target, relative: file.relative, before: file.hash, content, changedLines: changed });
  },
  execute(args, context, plan) {
    return commitEdit(context, plan, `edited ${plan.relative}: applied ${args.ops.length} line operation${args.ops.length === 1 ? '' : 's'}`);
  },
  checkResume: (intent, { workspace }) => checkEditResume(intent, workspace),
});
