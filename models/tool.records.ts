import { z } from 'zod';

/** Model-visible failure classes: the model reads them as observations and may correct itself. */
export const ToolErrorCode = z.enum(['InvalidInput', 'NotFound', 'Denied', 'Timeout', 'NonZeroExit', 'InDoubt', 'Cancelled']);
export type ToolErrorCode = z.infer<typeof ToolErrorCode>;

/** Set when an observation was cut: how much was left out and where the full output lives. */
export const Truncation = z.object({
  omittedBytes: z.number().int().nonnegative(),
  artifact: z.string(),
});
export type Truncation = z.infer<typeof Truncation>;

/** effect (fact) · the executor is about to run a tool (written before it runs). */
export const ToolStarted = z.object({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  name: z.string(),
});
export type ToolStarted = z.infer<typeof ToolStarted>;

/** input · the terminal result of one `executeTool` effect, including the observation the model will read. */
export const ToolSettled = z.object({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  name: z.string(),
  status: z.enum(['ok', 'error']),
  errorCode: ToolErrorCode.optional(),
  observation: z.string(),
  truncated: Truncation.optional(),
  elapsedMs: z.number().nonnegative(),
});
export type ToolSettled = z.infer<typeof ToolSettled>;
