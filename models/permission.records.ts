import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** Permission modes: `default` asks before edits and non-read-only commands; `plan` shows read-only tools only; `accept-edits` allows workspace edits. */
export const PermissionMode = lazySchema(() => z.enum(['default', 'plan', 'accept-edits']));
export type PermissionMode = z.infer<typeof PermissionMode>;

/** What a rule or a decision says about one call. */
export const PermissionAction = lazySchema(() => z.enum(['allow', 'ask', 'deny']));
export type PermissionAction = z.infer<typeof PermissionAction>;

/** Where a decision came from: a configured rule, the mode's default, a session grant, a person's answer, or an answer given in advance. */
export const PermissionSource = lazySchema(() => z.enum(['rule', 'mode', 'session', 'user', 'pre-approved']));
export type PermissionSource = z.infer<typeof PermissionSource>;

/**
 * Shell command classes. `delete`, `network`, `install`, `outside-workspace`, `protected-path`, `chained`,
 * `unparseable` and `privileged` are never allowed by a mode default or a wildcard rule.
 */
export const ShellClass = lazySchema(() => z.enum(['read-only', 'write', 'delete', 'network', 'install', 'outside-workspace', 'protected-path', 'chained', 'unparseable', 'privileged']));
export type ShellClass = z.infer<typeof ShellClass>;

/**
 * Who refused a call that never ran: a pattern `rule` (`deny bash:git push*`), a tool-wide deny that hides the tool
 * (`tool-deny`), the permission `mode` (plan mode hides and denies what changes things), or the `user` answering an
 * approval. A new kind of refusal (a policy hook, …) joins by adding its name here; nothing downstream branches on
 * the source: every denial is an outcome the model reads, never a fail-closed violation.
 */
export const DenialSource = lazySchema(() => z.enum(['rule', 'tool-deny', 'mode', 'user', 'hook', 'guardrail', 'budget']));
export type DenialSource = z.infer<typeof DenialSource>;

/** A call that was denied or hidden and so never ran: where the refusal came from, the rule that decided, and why. */
export const Denial = lazySchema(() => z.object({
  source: DenialSource,
  rule: z.string().nullable().optional(),
  reason: z.string(),
}));
export type Denial = z.infer<typeof Denial>;

/** effect (fact) · the permission stage's decision for one call, with the rule (or mode) that decided and why. */
export const PermissionDecided = lazySchema(() => z.object({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  tool: z.string(),
  target: z.string().optional(),
  decision: PermissionAction,
  rule: z.string().nullable(),
  reason: z.string(),
  mode: PermissionMode,
  source: PermissionSource,
  classes: z.array(ShellClass).optional(),
}));
export type PermissionDecided = z.infer<typeof PermissionDecided>;

/** How a person answered an approval request. */
export const ApprovalDecision = lazySchema(() => z.enum(['allow-once', 'allow-session', 'deny']));
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/**
 * input · a call needs a person's approval: it settles the call's effect without running the tool and moves the
 * session to awaiting approval. `approvalId` is the actor path of the permission actor that waits for the reply.
 */
export const ApprovalRequested = lazySchema(() => z.object({
  effectId: z.string().min(1),
  callId: z.string().min(1),
  approvalId: z.string().min(1),
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  target: z.string().optional(),
  summary: z.string(),
  risk: z.string(),
  reason: z.string(),
  suggestedRule: z.string().optional(),
  classes: z.array(ShellClass).optional(),
  elapsedMs: z.number().nonnegative(),
}));
export type ApprovalRequested = z.infer<typeof ApprovalRequested>;

/** input · the user's or host's answer, delivered to the permission actor `approvalId`. */
export const ApprovalReplied = lazySchema(() => z.object({
  approvalId: z.string().min(1),
  decision: ApprovalDecision,
  feedback: z.string().optional(),
  /** For `allow-session`: the rule granted for the rest of the session. */
  rule: z.string().optional(),
}));
export type ApprovalReplied = z.infer<typeof ApprovalReplied>;

/** The approval id (and permission actor path) for an `executeTool` effect `<actor>:e<n>`: `<actor>/approval-<n>`. */
export const approvalIdOf = (actor: string, effectId: string): string => `${actor}/approval-${effectId.slice(effectId.lastIndexOf(':e') + 2)}`;

/**
 * fact · a deny or ask rule for MCP tools that names no tool of the session once its servers are up (it guards
 * nothing: `deny mcp__everything__get_env` next to the tool `mcp__everything__get-env`), with the tool it most likely
 * meant. Written once per run, after the MCP servers are ready or have failed.
 */
export const PermissionRuleUnmatched = lazySchema(() => z.object({
  rule: z.string().min(1),
  suggestion: z.string().min(1).optional(),
}));
export type PermissionRuleUnmatched = z.infer<typeof PermissionRuleUnmatched>;
