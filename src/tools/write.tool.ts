import * as z from 'zod';
import { blake3Hex } from '../util/blake3.js';
import { readHostFile } from '../util/read-regular-file.js';
import { removeInterruptedTemps, writeWorkspaceFile } from './file-access.js';
import { defineTool, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const WriteParameters = lazySchema(() => z
  .object({
    path: z.string().min(1),
    content: z.string(),
  })
  .strict());
export type WriteParameters = z.infer<typeof WriteParameters>;

/** The file's hash now, or null when it is absent or not a regular file (read without blocking: a FIFO cannot hang it). */
const currentHash = async (path: string): Promise<string | null> => {
  const read = await readHostFile(path);
  return read.ok ? blake3Hex(read.bytes) : null;
};

/** Write a whole file atomically (temp file + rename) inside the workspace; the parent directory must exist there. */
export const writeTool = defineTool<WriteParameters, { target: string; relative: string }>({
  name: 'write',
  description: 'Create or overwrite a whole file (its directory must exist). Prefer edit or edit_lines to change an existing file.',
  parameters: WriteParameters,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false, requiresConfirmation: false },
  risk: 'write',
  sideEffect: 'workspace-write',
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    const resolved = await context.workspace.resolveWritable(args.path);
    if (!resolved.ok) return resolved;
    return { ok: true, plan: { target: resolved.path, relative: resolved.relative }, subject: { target: resolved.relative }, intent: { path: resolved.relative, after: blake3Hex(args.content) } };
  },
  async execute(args, context, plan) {
    const again = await context.workspace.resolveWritable(args.path);
    if (!again.ok || again.path !== plan.target) return toolFailure('Denied', `${args.path} changed while the call was checked; it is outside the workspace or protected now`, 'outside_workspace');
    const before = await currentHash(plan.target);
    const refused = await writeWorkspaceFile(context.workspace, plan.target, args.content);
    if (refused) return refused;
    const bytes = Buffer.byteLength(args.content);
    return { ok: true, output: `wrote ${bytes} bytes to ${plan.relative}`, data: { path: plan.relative, bytes }, files: [{ path: plan.relative, hash: blake3Hex(args.content), access: 'write', before }] };
  },
  async checkResume(intent, { workspace }) {
    const path = typeof intent?.path === 'string' ? intent.path : undefined;
    if (!path) return { resolution: 'rerun', reason: 'it never started' };
    const cleaned = await removeInterruptedTemps(workspace, path);
    const resolved = await workspace.resolveExisting(path);
    if (resolved.ok && (await currentHash(resolved.path)) === intent?.after) return { resolution: 'settled-from-log', reason: 'the file already has the written content', observation: `wrote ${path} (confirmed after a restart: the file has the new content)`, cleaned };
    return { resolution: 'rerun', reason: 'writing the same content again is idempotent', cleaned };
  },
});
