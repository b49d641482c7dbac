import * as z from 'zod';
import { lazySchema } from '../../models/lazy-schema.js';

/**
 * The `capture` object of `rein.config.json` and `createRein({ capture })`: whether sessions record their workspace
 * changes, what they leave out (`.gitignore`, more `exclude` patterns; `include` brings paths back) and the size above
 * which a file is recorded by digest and size only (`maxFileMb`, default 10).
 */
export const CaptureConfig = lazySchema(() => z
  .object({
    enabled: z.boolean().optional(),
    gitignore: z.boolean().optional(),
    exclude: z.array(z.string().min(1).max(1_000)).max(1_000).optional(),
    include: z.array(z.string().min(1).max(1_000)).max(1_000).optional(),
    maxFileMb: z.number().min(0).max(1_048_576).optional(),
  })
  .strict());
export type CaptureConfig = z.infer<typeof CaptureConfig>;
