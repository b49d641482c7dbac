import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * effect (fact) · a verification ran: a command the runtime classified as a verification (a test command) that a
 * tool executed, or one a host recorded itself. The status comes from the run: `passed` only for exit code 0 with
 * no signal and no timeout, `failed` otherwise, and `inconclusive` for an exit 0 whose runner reports that no test
 * ran (`# pass 0`, `0 passing`, `[no tests to run]`, `No tests found`). `passed` is the only status that can make a session `succeeded`;
 * `summary` holds the key lines of the output (failure lines first). Tool-driven ones carry the call's `callId`,
 * share its `corr`, and carry the exit evidence (`exitCode`, `signal`, `timedOut`, `durationMs`).
 */
export const VerificationRecorded = lazySchema(() => z.object({
  name: z.string().min(1),
  /**
   * `inconclusive`: the command exited 0 but cannot show a test ran (its runner's summary says none ran, or it shows
   * no count). `failed` also covers an exit 0 whose runner's own summary counts a failed test.
   */
  status: z.enum(['passed', 'failed', 'inconclusive']),
  callId: z.string().optional(),
  effectId: z.string().optional(),
  command: z.string().optional(),
  errorCode: z.string().optional(),
  /** The command's exit code (`null` when a signal ended it); a record without one is a claim, not a run. */
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().optional(),
  timedOut: z.enum(['soft', 'hard']).optional(),
  durationMs: z.number().nonnegative().optional(),
  summary: z.string(),
  artifact: z.string().optional(),
  /**
   * `npm test` / `npm run X` (and yarn, pnpm, bun): the script it ran, read from the workspace's `package.json` when
   * the call was made (`script` absent: no such script). The status was decided with it; replay reads it from here.
   */
  packageScript: z.object({ name: z.string().min(1), script: z.string().optional() }).optional(),
}));
export type VerificationRecorded = z.infer<typeof VerificationRecorded>;
