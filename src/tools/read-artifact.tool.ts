import * as z from 'zod';
import type { ArtifactRef } from '../../stores/blob-store.js';
import { defineTool, readOnlyAnnotations, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** Lines shown when the model gives no `limit`. */
export const defaultArtifactLimit = 400;

export const ReadArtifactParameters = lazySchema(() => z
  .object({
    artifact: z.string().regex(/^artifact:\/\/blake3\/[0-9a-f]{64}$/, 'an artifact ref looks like artifact://blake3/<64 hex>').describe('The ref a truncated result gave'),
    offset: z.number().int().min(1).optional().describe('First line, 1-based (default 1)'),
    limit: z.number().int().min(1).max(5_000).optional().describe(`Lines to show (default ${defaultArtifactLimit})`),
  })
  .strict());
export type ReadArtifactParameters = z.infer<typeof ReadArtifactParameters>;

/**
 * Page through a stored full output (a truncated observation's or a command's artifact) by line. Only artifacts
 * this session has been shown can be read.
 */
export const readArtifactTool = defineTool({
  name: 'read_artifact',
  description: 'Read the full output a truncated result stored as an artifact; page with offset/limit.',
  parameters: ReadArtifactParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'read',
  resumePolicy: 'rerun-after-check',
  async prepare(args, context) {
    if (!context.artifacts.has(args.artifact)) return toolFailure('NotFound', `${args.artifact} is not an artifact of this session`, 'unknown_artifact');
    return { ok: true, plan: undefined };
  },
  async execute(args, context) {
    let bytes: Uint8Array;
    try {
      bytes = await context.blobs.get(args.artifact as ArtifactRef);
    } catch (error) {
      return toolFailure('NotFound', `${args.artifact} could not be read (${(error as { code?: string }).code ?? 'error'})`, 'unknown_artifact');
    }
    const text = Buffer.from(bytes).toString('utf8');
    const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
    const first = args.offset ?? 1;
    const shown = lines.slice(first - 1, first - 1 + (args.limit ?? defaultArtifactLimit));
    const rest = lines.length - (first - 1 + shown.length);
    const body = shown.map((line, index) => `${first + index} | ${line}`).join('\n');
    const footer = shown.length === 0 ? `(the artifact has ${lines.length} lines; offset ${first} is past the end)` : rest > 0 ? `\n… ${rest} more lines (use offset ${first + shown.length})` : `\n(end of artifact, ${lines.length} lines)`;
    return { ok: true, output: body + footer, data: { lines: lines.length, shown: shown.length } };
  },
});
