import * as z from 'zod';
import { ApprovalDecision, PermissionMode, PermissionSource } from '../../models/permission.records.js';
import { lazySchema } from '../../models/lazy-schema.js';

const ProviderIdentity = lazySchema(() => z.object({ name: z.string().min(1), model: z.string().optional(), source: z.string().optional() }));

/**
 * What a queued session carries for the worker that runs it (docs/postgres.md: *Workers*): the task, the workspace, the
 * provider's identity (name, model, endpoint or script path — never a key: a worker reads its own environment), the
 * scripted provider's script itself, the permission rules and flags, the sandbox overrides, the budgets and the
 * `--plugin` directories.
 */
export const QueuedSession = lazySchema(() => z
  .object({
    sessionId: z.string().min(1),
    task: z.string(),
    workspace: z.string().min(1),
    provider: ProviderIdentity.extend({ fallbacks: z.array(ProviderIdentity).optional() }),
    /** The scripted provider's script, so a worker needs no copy of the file. */
    script: z.unknown().optional(),
    permissions: z
      .object({
        mode: PermissionMode.optional(),
        rules: z.array(z.union([z.string(), z.object({ action: z.enum(['allow', 'ask', 'deny']), tool: z.string(), pattern: z.string().optional(), source: PermissionSource.optional() })])).optional(),
        approveAll: z.boolean().optional(),
      })
      .default({}),
    /** Overrides of the sandbox policy (`SandboxPolicy` fields), as the submitter gave them. */
    sandbox: z.record(z.string(), z.unknown()).default({}),
    budgets: z.record(z.string(), z.number()).default({}),
    /**
     * `--plugin` directories (absolute) the submitter ran with: the worker loads them besides the workspace's user and
     * project plugins and its command hooks, which it reads itself, as `rein run` there would.
     */
    plugins: z.array(z.string().min(1)).default([]),
    /** Rerun in-doubt effects that need confirmation when a worker resumes the session (`rein run --detach --yes`). */
    confirmInDoubt: z.boolean().default(false),
    submittedAt: z.number(),
  })
  .strict());
export type QueuedSession = z.infer<typeof QueuedSession>;
/** A queued session as a submitter may give it (fields with defaults may be left out). */
export type QueuedSessionInput = z.input<typeof QueuedSession>;

/** An approval answer left in the queue for the worker that runs the session (`rein approve`). */
export const QueuedAnswer = lazySchema(() => z.object({ approvalId: z.string().min(1), decision: ApprovalDecision, feedback: z.string().optional() }).strict());
export type QueuedAnswer = z.infer<typeof QueuedAnswer>;

/**
 * A confirmation left in the queue for a session parked on an in-doubt effect (`rein approve <sessionId> <effectId>`):
 * `rerun` it, or `decline` (it is settled in doubt and the model is told its outcome is unknown). The worker that claims
 * the session next resumes it with the answer.
 */
export const QueuedConfirmation = lazySchema(() => z.object({ effectId: z.string().min(1), decision: z.enum(['rerun', 'decline']) }).strict());
export type QueuedConfirmation = z.infer<typeof QueuedConfirmation>;

/** The confirmations among a queued session's answers, as `resumeSession` takes them. */
export const confirmationsOf = (answers: readonly unknown[]): { confirmEffects: string[]; declineEffects: string[] } => {
  const confirmations = answers.flatMap((raw) => {
    const parsed = QueuedConfirmation.safeParse(raw);
    return parsed.success ? [parsed.data] : [];
  });
  return {
    confirmEffects: confirmations.filter((answer) => answer.decision === 'rerun').map((answer) => answer.effectId),
    declineEffects: confirmations.filter((answer) => answer.decision === 'decline').map((answer) => answer.effectId),
  };
};
