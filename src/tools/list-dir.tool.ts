import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool, readOnlyAnnotations } from './tool.js';

export const ListDirParameters = z
  .object({ path: z.string().min(1).default('.').describe('Directory path, relative to the workspace root') })
  .strict();

type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

/** List a directory as JSON `[{ name, kind }]`, sorted by name. */
export const listDirTool = defineTool({
  name: 'list_dir',
  description: 'List the entries of a directory in the workspace as JSON [{"name","kind"}].',
  parameters: ListDirParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  async execute(args, context) {
    const resolved = await context.workspace.resolveExisting(args.path);
    if (!resolved.ok) return { ok: false, code: resolved.code, message: resolved.message };
    let entries;
    try {
      entries = await readdir(resolved.path, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') return { ok: false, code: 'InvalidInput', message: `${args.path} is a file; use read` };
      return { ok: false, code: 'NotFound', message: `${args.path} could not be listed (${code ?? 'error'})` };
    }
    const listed = entries
      .filter((entry) => !context.workspace.isProtected(join(resolved.path, entry.name)))
      .map((entry) => ({ name: entry.name, kind: (entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'other') as EntryKind }))
      .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    return { ok: true, output: JSON.stringify(listed), data: listed };
  },
});
