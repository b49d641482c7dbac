import * as z from 'zod';
import { ProviderErrorInfo, StopReason, TokenUsage } from './model.records.js';

/** A tool call inside an assistant message, in core terms. */
export const ModelMessageToolCall = z.object({
  callId: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
export type ModelMessageToolCall = z.infer<typeof ModelMessageToolCall>;

/** One message of the model input, in core terms (no vendor SDK type crosses an adapter). */
export const ModelMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({ role: z.literal('assistant'), content: z.string(), toolCalls: z.array(ModelMessageToolCall).optional() }),
  z.object({ role: z.literal('tool'), callId: z.string(), name: z.string(), content: z.string(), isError: z.boolean() }),
]);
export type ModelMessage = z.infer<typeof ModelMessage>;

/** A tool as the model sees it: name, description and JSON Schema. It carries no executor. */
export const ModelToolDescription = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type ModelToolDescription = z.infer<typeof ModelToolDescription>;

export const ModelOptions = z.object({
  maxOutputTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  toolChoice: z.enum(['auto', 'any', 'none']).optional(),
  parallelToolCalls: z.boolean().optional(),
});
export type ModelOptions = z.infer<typeof ModelOptions>;

/**
 * Everything a provider needs for one model call. `turn` counts this actor's model calls from 1. `signal` aborts
 * the call: an adapter must stop reading and release the connection promptly when it fires.
 */
export interface ModelRequest {
  runId: string;
  turnId: string;
  turn: number;
  /** The actor path that asked (`root`, `root/child-2`); a recorded provider keys its outputs by it. */
  actor?: string;
  /** The agent role for child agents (`explorer`, `tester`…); absent for the root agent. */
  role?: string;
  /** Which attempt of this model call this is (1 for the first; retries count up). */
  attempt?: number;
  model?: string;
  messages: ModelMessage[];
  tools: ModelToolDescription[];
  options: ModelOptions;
  /**
   * Indexes of the messages that end a stable part of the input (at most three): a provider that caches prompts marks
   * them (Anthropic `cache_control`), so later calls read the prefix from the cache. Absent: nothing is marked.
   */
  cacheBreakpoints?: readonly number[];
  signal?: AbortSignal;
}

/**
 * What a provider streams back. Tool intents are proposed only once their arguments are complete; `intent`
 * carries the vendor's call id as provenance (the core assigns its own id).
 */
export const ModelEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started'), model: z.string().optional(), requestId: z.string().optional() }),
  z.object({ type: z.literal('text-delta'), text: z.string() }),
  z.object({ type: z.literal('reasoning-delta'), text: z.string() }),
  z.object({
    type: z.literal('tool-intent-delta'),
    index: z.number().int().nonnegative(),
    providerCallId: z.string().optional(),
    name: z.string().optional(),
    argumentsDelta: z.string(),
  }),
  z.object({
    type: z.literal('tool-intent'),
    providerCallId: z.string().optional(),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  }),
  z.object({ type: z.literal('usage'), usage: TokenUsage }),
  z.object({ type: z.literal('finished'), stopReason: StopReason, rawStopReason: z.string().optional() }),
  z.object({ type: z.literal('error'), error: ProviderErrorInfo }),
]);
export type ModelEvent = z.infer<typeof ModelEvent>;
