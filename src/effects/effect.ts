import type { CostBudgetStop } from '../../models/session.records.js';
import type { FactDraft, RecordEnvelope } from '../../models/envelope.js';
import type { EffectKind, ResumePolicy } from '../../models/effect.records.js';
import type { LiveEvent } from '../../models/live-events.js';

export type { FactDraft } from '../../models/envelope.js';

/** One requested effect as an executor sees it. */
export interface EffectRequest {
  effectId: string;
  kind: EffectKind;
  actor: string;
  args: Record<string, unknown>;
  /** The id of the `effect.requested` record, for `cause` links. */
  recordId: string;
  corr?: string;
}


/** The input record that settles an effect; the host applies it as the next step. */
export interface Settlement {
  type: string;
  data: Record<string, unknown>;
  corr?: string;
  /** Facts that did not need to be durable before the effect ran; they are written in the settling step's batch. */
  facts?: FactDraft[];
  /** Blobs those facts reference, written into the stream in the same batch (see `AppendOptions.blobs`). */
  blobs?: Uint8Array[];
}

/** What the host gives an executor: cancellation, fact recording, live streaming, and the session clock. */
export interface EffectContext {
  sessionId: string;
  signal: AbortSignal;
  /** Whether `signal` aborted, read without making it (the host's contexts make their signal on its first read). */
  readonly aborted?: boolean;
  /**
   * Run `hook` once when `signal` aborts (at once if it already did); returns the hook's removal. Unlike a listener on
   * `signal`, it does not make the signal. Read both through `isAborted` / `whenAborted` (src/effects/abort-hooks.ts),
   * which fall back on `signal` for a context without them.
   */
  onAbort?(hook: () => void): () => void;
  /**
   * Append facts as one batch and wait for them: `sync: true` waits until they are synced (an intent before a side
   * effect); by default until the store acknowledges them (its commit covers them); `sync: false` only until they are
   * written — they become durable with the next commit, which the steps after them wait for, so a crash before it
   * loses them together with those steps (the effect is in doubt and runs again on resume).
   */
  recordFacts(facts: readonly FactDraft[], options?: { sync?: boolean; blobs?: Uint8Array[] }): Promise<void>;
  live(event: LiveEvent): void;
  /**
   * Pause the session before this effect (a model call the cost budget cannot pay for): whatever the executor then
   * returns is dropped, the effect stays in doubt, and the host records the pause once nothing runs. Absent outside a
   * host (an executor then fails the effect with the stop's code).
   */
  pause?(stop: CostBudgetStop): void;
  /** The host clock (epoch ms), for stamping deferred facts. */
  now(): number;
  /** Milliseconds since the session was created, measured by the host's clock. */
  elapsedMs(): number;
  /**
   * How long an effect may go on after `signal` aborted before the runtime abandons it (ReinOptions
   * `abandonGraceMs`): a tool then settles `Cancelled`, a model call `cancelled`, whatever the executor still does.
   */
  abandonGraceMs?: number;
}

/**
 * Executes one kind of effect and returns the input that settles it. Must not throw for model-correctable
 * problems; a throw is an infrastructure failure and becomes `effect.failed`.
 */
export interface EffectExecutor {
  /**
   * Run the effect. `prepared` is what `prepare` returned for this request, when the host prepared it while the
   * request was being written; without it the executor prepares as it runs.
   */
  execute(request: EffectRequest, context: EffectContext, prepared?: Promise<unknown>): Promise<Settlement>;
  /**
   * Optional: the pure part of the effect's work that may run before its request is written (the host calls it while
   * the request's batch is being written, with the session's views already holding that batch). It must start
   * nothing outside the process — no model call, no tool, no write, no hook. What it returns goes to `execute` once
   * the request is written; after a failed write (the session breaks) it is dropped, never used. Undefined: nothing
   * to prepare now (`execute` then prepares as it runs).
   */
  prepare?(request: EffectRequest): Promise<unknown> | undefined;
  /** The resume policy for an effect of this kind that was requested but never settled. */
  resumePolicy(request: EffectRequest): ResumePolicy;
  /** Whether this effect must run alone in its actor's tool lane (default true); read-only tools share it. */
  isExclusive?(request: EffectRequest): boolean;
  /**
   * For `rerun-after-check`: the check itself. Given the in-doubt request and its `tool.started` record (absent when
   * it never started), say whether to rerun it, settle it from what the world shows, or ask for confirmation.
   * Undefined (or no hook) means rerun.
   */
  checkResume?(request: EffectRequest, started: RecordEnvelope | undefined): Promise<EffectResumeCheck | undefined>;
}

/**
 * The outcome of a resume check (see `EffectExecutor.checkResume`). `failed-in-doubt` refuses a rerun even with
 * confirmation (a command whose earlier processes are still running); `cleaned` lists workspace-relative files the
 * check removed (temp files of an interrupted write), which resume records as `workspace.cleaned`.
 */
export type EffectResumeCheck = (
  | { resolution: 'rerun'; reason: string }
  | { resolution: 'settled-from-log'; reason: string; observation: string }
  | { resolution: 'awaiting-confirmation'; reason: string }
  | { resolution: 'failed-in-doubt'; reason: string }
) & { cleaned?: string[] };

/** Executors by effect kind. */
export type EffectExecutors = Partial<Record<EffectKind, EffectExecutor>>;
