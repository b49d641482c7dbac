import * as z from 'zod';
import { executionFailure } from './execution-outcome.js';
import { Denial, PermissionMode, ShellClass } from './permission.records.js';
import { GuardrailEvidence, Provenance } from './turn.records.js';
import { lazySchema } from './lazy-schema.js';

/**
 * Model-visible failure classes: the model reads them as observations and may correct itself. `ExecutionFailed`: a
 * tool ran and reported failure (an MCP result with `isError`, a server's protocol error); `Unavailable`: the tool's
 * server is down or gone; `ToolFailed`: a plugin's tool threw or returned something that is not a tool result.
 */
export const ToolErrorCode = lazySchema(() => z.enum(['InvalidInput', 'NotFound', 'Denied', 'Timeout', 'NonZeroExit', 'InDoubt', 'Cancelled', 'ExecutionFailed', 'Unavailable', 'ToolFailed']));
export type ToolErrorCode = z.infer<typeof ToolErrorCode>;

/** Set when an observation was cut: how much was left out and where the full output lives. */
export const Truncation = lazySchema(() => z.object({
  omittedBytes: z.number().int().nonnegative(),
  artifact: z.string(),
}));
export type Truncation = z.infer<typeof Truncation>;

/**
 * What a tool that runs a command reports about the run: the command, its exit code (`null` when a signal ended
 * it), the signal, whether the timeout stopped it, and how long it ran. A verification's status is derived from
 * this and nothing else.
 */
export const CommandExecution = lazySchema(() => z.object({
  command: z.string(),
  exitCode: z.number().int().nullable(),
  signal: z.string().optional(),
  timedOut: z.enum(['soft', 'hard']).optional(),
  durationMs: z.number().nonnegative(),
}));
export type CommandExecution = z.infer<typeof CommandExecution>;

/** True when an execution ran to completion and exited 0: the only run that is a passing verification. */
export const executionPassed = (execution: CommandExecution): boolean => executionFailure(execution) === undefined;

/** The fields every tool record starts with (a function, so they are built with the schema that spreads them, on first use). */
const callFields = () => ({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  name: z.string(),
});

/**
 * effect (fact) · the executor is about to run a tool (written before it runs); `intent` lets resume check it. The
 * pipeline folds the plain checks that let it start into it instead of writing records of their own: `validated`
 * (its arguments passed schema validation) and `permission` (the mode's plain allow: the decision, rule, reason, mode
 * and source a `permission.decided` would hold). A read-only tool's `tool.started` is itself folded into its step
 * record.
 */
export const ToolStarted = lazySchema(() => z.object({
  ...callFields(),
  intent: z.record(z.string(), z.unknown()).optional(),
  validated: z.literal(true).optional(),
  permission: z
    .object({ target: z.string().optional(), decision: z.literal('allow'), rule: z.string().nullable(), reason: z.string(), mode: PermissionMode, source: z.literal('mode'), classes: z.array(ShellClass).optional() })
    .optional(),
}));
export type ToolStarted = z.infer<typeof ToolStarted>;

/** The pipeline stages that can reject a call before it is validated or executed. */
export const RejectionStage = lazySchema(() => z.enum(['lookup', 'visibility', 'runtime-validation', 'pre-flight', 'budget', 'parallel']));
export type RejectionStage = z.infer<typeof RejectionStage>;

/**
 * effect (fact) · a pipeline stage refused the call: `code` is the validation code (`unknown_tool`,
 * `tool_not_visible`, `outside_workspace`, `stale_file_baseline`, `ambiguous_target`, …) and `errorCode` what the
 * model was told.
 */
export const ToolRejected = lazySchema(() => z.object({
  ...callFields(),
  stage: RejectionStage,
  code: z.string().min(1),
  errorCode: ToolErrorCode,
  message: z.string(),
}));
export type ToolRejected = z.infer<typeof ToolRejected>;

/** The repair kinds of the whitelist that change a value rather than a field name. */
export const RepairKind = lazySchema(() => z.enum(['string-to-boolean', 'string-to-integer', 'markdown-autolink', 'json-unescape', 'crlf-line-endings']));
export type RepairKind = z.infer<typeof RepairKind>;

/** One repair: a field renamed (`from` → `to`) or a field's value reshaped (`field`, `kind`). */
export const InputRepair = lazySchema(() => z.union([
  z.object({ from: z.string().min(1), to: z.string().min(1) }).strict(),
  z.object({ field: z.string().min(1), kind: RepairKind }).strict(),
]));
export type InputRepair = z.infer<typeof InputRepair>;

/** effect (fact) · the input-repair stage (or an edit's JSON-unescape) changed the model's arguments. */
export const ToolRepaired = lazySchema(() => z.object({ ...callFields(), repairs: z.array(InputRepair).min(1) }));
export type ToolRepaired = z.infer<typeof ToolRepaired>;

/** One schema problem, with its field path and zod issue code (never the field's value). */
export const ValidationIssue = lazySchema(() => z.object({ path: z.string(), code: z.string(), message: z.string() }));
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/** effect (fact) · the schema-validation stage's verdict on the (repaired) arguments. */
export const ToolValidated = lazySchema(() => z.object({ ...callFields(), ok: z.boolean(), issues: z.array(ValidationIssue).optional() }));
export type ToolValidated = z.infer<typeof ToolValidated>;

/** effect (fact) · a tool read a file: its workspace-relative path and the BLAKE3 of its whole content (the baseline). */
export const FileRead = lazySchema(() => z.object({ callId: z.string().min(1), path: z.string().min(1), hash: z.string().min(1) }));
export type FileRead = z.infer<typeof FileRead>;

/** effect (fact) · a tool wrote a file: the new content's hash becomes the baseline for later edits. */
export const FileWritten = lazySchema(() => z.object({
  callId: z.string().min(1),
  path: z.string().min(1),
  hash: z.string().min(1),
  before: z.string().nullable(),
}));
export type FileWritten = z.infer<typeof FileWritten>;

/** input · the terminal result of one `executeTool` effect, including the observation the model will read. */
export const ToolSettled = lazySchema(() => z.object({
  ...callFields(),
  status: z.enum(['ok', 'error']),
  errorCode: ToolErrorCode.optional(),
  /** The class of the error the tool threw (`TypeError`, a host tool's own class), for a failure that was a throw. */
  errorClass: z.string().optional(),
  observation: z.string(),
  truncated: Truncation.optional(),
  /** Blob refs the result points to (full outputs); `read_artifact` may read only refs its session has seen. */
  artifacts: z.array(z.string()).optional(),
  /** Boundary evidence of the runtime that produced the result (shell results: workdir, sandbox profile, command digest). */
  provenance: Provenance.optional(),
  /** The pipeline stage that refused the call, for a failure that never ran (the turn typestate reads it); `cancelled`: it was cancelled before it started. */
  failedStage: z.enum(['lookup', 'visibility', 'schema', 'runtime-validation', 'hook', 'guardrail', 'pre-flight', 'permission', 'cancelled', 'budget', 'parallel']).optional(),
  /** A structured result a machine reads (a child's validated report from `submit_report`). */
  value: z.record(z.string(), z.unknown()).optional(),
  /** The command the tool ran and how it ended (exit code, signal, timeout); absent for tools that run no command. */
  execution: CommandExecution.optional(),
  /** For a call denied or hidden by policy or by a person (it never ran): who refused it and why. */
  denial: Denial.optional(),
  /** The guardrail stages the call passed through, in order (only where guardrails are configured). */
  guardrails: z.array(GuardrailEvidence).optional(),
  elapsedMs: z.number().nonnegative(),
}));
export type ToolSettled = z.infer<typeof ToolSettled>;
