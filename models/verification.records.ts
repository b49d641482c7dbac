import { z } from 'zod';

/**
 * effect (fact) · a verification ran: a tool call the runtime classified as a verification (a test command) or
 * one a host recorded itself. `passed` is the only status that can make a session `succeeded`; `summary` holds the
 * key lines of the output (failure lines first). Tool-driven ones carry the call's `callId` and share its `corr`.
 */
export const VerificationRecorded = z.object({
  name: z.string().min(1),
  status: z.enum(['passed', 'failed']),
  callId: z.string().optional(),
  effectId: z.string().optional(),
  command: z.string().optional(),
  errorCode: z.string().optional(),
  summary: z.string(),
  artifact: z.string().optional(),
});
export type VerificationRecorded = z.infer<typeof VerificationRecorded>;
