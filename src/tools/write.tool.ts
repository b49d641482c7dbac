import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { blake3Hex } from '../util/blake3.js';
import { defineTool } from './tool.js';

export const WriteParameters = z
  .object({
    path: z.string().min(1).describe('File path, relative to the workspace root; its directory must exist'),
    content: z.string().describe('The complete new content of the file'),
  })
  .strict();

/** Write a whole file atomically (temp file + rename) inside the workspace. */
export const writeTool = defineTool({
  name: 'write',
  description: 'Create or overwrite a file in the workspace with the given content. The parent directory must exist.',
  parameters: WriteParameters,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false, requiresConfirmation: false },
  risk: 'write',
  sideEffect: 'workspace-write',
  resumePolicy: 'rerun-after-check',
  async execute(args, context) {
    const resolved = await context.workspace.resolveWritable(args.path);
    if (!resolved.ok) return { ok: false, code: resolved.code, message: resolved.message };
    const temporary = `${resolved.path}.rein-${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, args.content, { flag: 'wx' });
      await rename(temporary, resolved.path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    context.readBaselines.set(resolved.path, blake3Hex(args.content));
    const bytes = Buffer.byteLength(args.content);
    return { ok: true, output: `wrote ${bytes} bytes to ${resolved.relative}`, data: { path: resolved.relative, bytes } };
  },
});
