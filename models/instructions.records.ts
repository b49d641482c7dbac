import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** One instruction file as a model input included it: its path, where it comes from, its digest, whether it was cut. */
export const InstructionFile = lazySchema(() => z.object({
  /** Workspace-relative for a project file; the absolute path of the user's file. */
  path: z.string().min(1),
  scope: z.enum(['user', 'project']),
  digest: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  /** Over its share of the budget: cut, with a note in the text that says so. */
  cut: z.literal(true).optional(),
}));
export type InstructionFile = z.infer<typeof InstructionFile>;

/**
 * effect (fact) · the project instructions the model sees changed (the first load included): the files (user file,
 * AGENTS.md / CLAUDE.md on the way to the files the agent works in), the rendered text as a blob and its digest, its
 * tokens; `changed` says what moved since the last one. Written with the model call that first sees them.
 */
export const InstructionsLoaded = lazySchema(() => z.object({
  digest: z.string().min(1),
  text: z.string().min(1),
  tokens: z.number().int().nonnegative(),
  files: z.array(InstructionFile),
  changed: z.object({ added: z.array(z.string()), changed: z.array(z.string()), removed: z.array(z.string()) }).optional(),
}));
export type InstructionsLoaded = z.infer<typeof InstructionsLoaded>;

/**
 * effect (fact) · the environment block the model sees (workspace, OS and shell, date, sandbox and network, git
 * branch/state/recent commits, a capped top-level listing), captured once when the session's first model call is
 * prepared. The text is a blob (`text`) known by `digest`: a resumed or forked session shows the model the same block,
 * and `rein context` shows it as it was.
 */
export const EnvironmentCaptured = lazySchema(() => z.object({
  digest: z.string().min(1),
  text: z.string().min(1),
  tokens: z.number().int().nonnegative(),
  /** Whether the workspace is a git work tree (the block then names its branch and state). */
  git: z.boolean(),
}));
export type EnvironmentCaptured = z.infer<typeof EnvironmentCaptured>;
