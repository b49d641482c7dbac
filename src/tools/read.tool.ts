import * as z from 'zod';
import { blake3Hex } from '../util/blake3.js';
import { readWorkspaceFile } from './file-access.js';
import { renderTaggedPage, splitLines } from './line-tags.js';
import { defineTool, readOnlyAnnotations } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** Lines shown when the model gives no `limit`. */
export const defaultReadLimit = 2_000;

export const ReadParameters = lazySchema(() => z
  .object({
    path: z.string().min(1),
    offset: z.number().int().min(1).optional().describe('First line, 1-based (default 1)'),
    limit: z.number().int().min(1).optional().describe(`Lines to show (default ${defaultReadLimit})`),
  })
  .strict());
export type ReadParameters = z.infer<typeof ReadParameters>;

/**
 * Read a text file as tagged lines `<line_no> <tag> | <text>` and record the whole content's hash as the session's
 * baseline for later edits (`file.read`). It shows the requested range, or as much of it as fits in the
 * observation budget, and tags only what it shows; an empty file, a range past the end and a shortened listing each
 * say so (with the offset to continue from), so a read is never cut into an artifact.
 */
export const readTool = defineTool({
  name: 'read',
  description: 'Read a text file; each line is shown as `<line_no> <tag> | <text>` (edit_lines uses the tags). Use offset/limit for long files.',
  parameters: ReadParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    const resolved = await context.workspace.resolveFile(args.path);
    if (!resolved.ok) return resolved;
    return { ok: true, plan: undefined, subject: { target: resolved.relative } };
  },
  async execute(args, context) {
    const file = await readWorkspaceFile(context.workspace, args.path);
    if (!('content' in file)) return file;
    const { lines } = splitLines(file.content);
    const first = args.offset ?? 1;
    const requested = lines.slice(first - 1, first - 1 + (args.limit ?? defaultReadLimit));
    // Room for the footer; a single line longer than the budget is still shown (and then cut by the pipeline).
    const page = renderTaggedPage(requested, first, context.outputBudget - 120);
    let note = '';
    if (lines.length === 0) note = `(${file.relative} is empty)`;
    else if (requested.length === 0) note = `(${file.relative} has ${lines.length} lines; offset ${first} is past the end)`;
    else if (first - 1 + page.count < lines.length) note = `\n… ${lines.length - (first - 1 + page.count)} more lines (use offset ${first + page.count})${page.count < requested.length ? '; the listing stopped at the observation budget' : ''}`;
    return {
      ok: true,
      output: page.text + note,
      data: { path: file.relative, lines: lines.length, shown: page.count },
      files: [{ path: file.relative, hash: blake3Hex(file.bytes), access: 'read' }],
    };
  },
});
