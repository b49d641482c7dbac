import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { listPinned } from './pinned-directory.js';
import { defineTool, readOnlyAnnotations, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const ListDirParameters = lazySchema(() => z
  .object({ path: z.string().min(1).default('.') })
  .strict());
export type ListDirParameters = z.infer<typeof ListDirParameters>;

type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

/** List a directory as JSON `[{ name, kind }]`, sorted by name; protected paths (the store) are left out. */
export const listDirTool = defineTool<ListDirParameters, { directory: string }>({
  name: 'list_dir',
  description: 'List a directory as JSON [{"name","kind"}].',
  parameters: ListDirParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    const resolved = await context.workspace.resolveExisting(args.path);
    if (!resolved.ok) return resolved;
    return { ok: true, plan: { directory: resolved.path }, subject: { target: resolved.relative } };
  },
  async execute(args, context, plan) {
    const info = await stat(plan.directory).catch(() => undefined);
    if (info && !info.isDirectory()) return toolFailure('InvalidInput', `${args.path} is a file; use read`, 'not_a_directory');
    // Listed by descriptor after checking its real path, so a directory swapped for a symlink is never followed out.
    const entries = await listPinned(plan.directory);
    if (!entries) return toolFailure(info ? 'Denied' : 'NotFound', `${args.path} could not be listed: it ${info ? 'changed while the call was checked' : 'no longer exists'}`, info ? 'outside_workspace' : 'not_found');
    const listed = entries
      .filter((entry) => !context.workspace.isProtected(join(plan.directory, entry.name)))
      .map((entry) => ({ name: entry.name, kind: (entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'other') as EntryKind }))
      .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    return { ok: true, output: JSON.stringify(listed), data: listed };
  },
});
