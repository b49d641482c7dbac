import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** The kinds of effect a machine can request; each kind has an executor in src/effects. */
export const EffectKind = lazySchema(() => z.enum(['callModel', 'executeTool', 'spawnChild', 'projectContext', 'startTimer']));
export type EffectKind = z.infer<typeof EffectKind>;

/** What to do with an effect that was requested but never settled when a process resumes the session. */
export const ResumePolicy = lazySchema(() => z.enum(['replay-from-event', 'rerun-after-check', 'require-user-confirmation', 'never-rerun']));
export type ResumePolicy = z.infer<typeof ResumePolicy>;

/** effect (derived) · a machine asked the runtime to do something; it starts only after this record is durable. */
export const EffectRequested = lazySchema(() => z.object({
  effectId: z.string().min(1),
  kind: EffectKind,
  args: z.record(z.string(), z.unknown()),
}));
export type EffectRequested = z.infer<typeof EffectRequested>;

/** How an in-doubt effect was resolved on resume. */
export const EffectResolution = lazySchema(() => z.enum(['rerun', 'settled-from-log', 'failed-in-doubt', 'awaiting-confirmation']));
export type EffectResolution = z.infer<typeof EffectResolution>;

/** effect (fact) · resume found this effect requested but unsettled and resolved it by its kind's policy. */
export const EffectResolved = lazySchema(() => z.object({
  effectId: z.string().min(1),
  kind: EffectKind,
  policy: ResumePolicy,
  resolution: EffectResolution,
  reason: z.string(),
}));
export type EffectResolved = z.infer<typeof EffectResolved>;

/** input · an effect failed for infrastructure reasons (not model-correctable): the session stops. */
export const EffectFailed = lazySchema(() => z.object({
  effectId: z.string().min(1),
  error: z.object({ code: z.string(), message: z.string() }),
  elapsedMs: z.number().nonnegative(),
}));
export type EffectFailed = z.infer<typeof EffectFailed>;
