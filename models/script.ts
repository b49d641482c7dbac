import * as z from 'zod';
import { StopReason } from './stop-reason.js';
import { lazySchema } from './lazy-schema.js';

/** One scripted tool call: a tool name and its arguments, exactly as a model would propose them. */
export const ScriptToolCall = lazySchema(() => z
  .object({
    name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).default({}),
  })
  .strict());
export type ScriptToolCall = z.infer<typeof ScriptToolCall>;

/**
 * One scripted model turn. A turn without tool calls ends the run. Unknown keys are refused (a `tool_calls` or a
 * `txt` would otherwise be dropped silently and the turn would do something else than meant); unknown tool names are
 * not — calling a tool that does not exist is how unknown-tool handling is tested.
 */
export const ScriptTurn = lazySchema(() => z
  .object({
    text: z.string().default(''),
    reasoning: z.string().optional(),
    toolCalls: z.array(ScriptToolCall).default([]),
    /** The usage the reply reports (default: rein's estimate); cache reads and writes are part of `inputTokens`, to rehearse prompt caching and its cost. */
    usage: z
      .object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative(), cacheReadTokens: z.number().int().nonnegative().optional(), cacheWriteTokens: z.number().int().nonnegative().optional() })
      .strict()
      .optional(),
    /** Why the turn stopped, as a model would say (default: `tool_use` with tool calls, else `end_turn`): `max_tokens`, `content_filter`… */
    stopReason: StopReason.optional(),
  })
  .strict());
export type ScriptTurn = z.infer<typeof ScriptTurn>;

/**
 * The scripted provider's file format. `turns` are played in order for the root agent; `agents.<role>.turns` for a
 * child agent of that role. Later versions extend this object but never break it.
 */
export const Script = lazySchema(() => z
  .object({
    turns: z.array(ScriptTurn),
    agents: z.record(z.string(), z.object({ turns: z.array(ScriptTurn) }).strict()).default({}),
  })
  .strict());
export type Script = z.infer<typeof Script>;
/** A script as you write it: what `Script` accepts before its defaults are filled in (`text`, `toolCalls`, `agents` may be left out). */
export type ScriptInput = z.input<typeof Script>;
/** A turn as you write it (`text` and `toolCalls` may be left out). */
export type ScriptTurnInput = z.input<typeof ScriptTurn>;
