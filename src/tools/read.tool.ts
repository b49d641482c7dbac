import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { blake3Hex } from '../util/blake3.js';
import { defineTool, readOnlyAnnotations } from './tool.js';

/** The 8-hex-character tag of a line: BLAKE3 of `"<line_no>:<text>"`. Edits quote it to anchor a line. */
export const lineTag = (lineNumber: number, text: string): string => blake3Hex(`${lineNumber}:${text}`).slice(0, 8);

/** Render lines as `<line_no> <tag> | <text>`, numbering from `firstLine`. */
export const renderTaggedLines = (lines: readonly string[], firstLine: number): string =>
  lines.map((text, index) => `${firstLine + index} ${lineTag(firstLine + index, text)} | ${text}`).join('\n');

export const ReadParameters = z
  .object({
    path: z.string().min(1).describe('File path, relative to the workspace root'),
    offset: z.number().int().min(1).optional().describe('First line to show (1-based)'),
    limit: z.number().int().min(1).optional().describe('Number of lines to show'),
  })
  .strict();

/** Read a text file as tagged lines and remember its content hash as the baseline for later edits. */
export const readTool = defineTool({
  name: 'read',
  description: 'Read a text file in the workspace. Each line is shown as `<line_no> <tag> | <text>`; edit_lines uses the tags.',
  parameters: ReadParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  async execute(args, context) {
    const resolved = await context.workspace.resolveExisting(args.path);
    if (!resolved.ok) return { ok: false, code: resolved.code, message: resolved.message };
    let content: string;
    try {
      content = await readFile(resolved.path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EISDIR') return { ok: false, code: 'InvalidInput', message: `${args.path} is a directory; use list_dir` };
      return { ok: false, code: 'NotFound', message: `${args.path} could not be read (${code ?? 'error'})` };
    }
    context.readBaselines.set(resolved.path, blake3Hex(content));
    const lines = content.length === 0 ? [] : content.replace(/\n$/, '').split('\n');
    const first = args.offset ?? 1;
    const shown = lines.slice(first - 1, args.limit === undefined ? undefined : first - 1 + args.limit);
    const rest = lines.length - (first - 1 + shown.length);
    const footer = rest > 0 ? `\n… ${rest} more lines (use offset ${first + shown.length})` : '';
    return { ok: true, output: renderTaggedLines(shown, first) + footer, data: { path: resolved.relative, lines: lines.length } };
  },
});
