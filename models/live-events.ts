/**
 * Ephemeral events a host streams to subscribers while effects run. They are never persisted: everything that
 * matters for replay arrives later as records (the assembled reply, the settled tool result).
 */
export type LiveEvent =
  | { type: 'model.delta'; actor: string; effectId: string; channel: 'text' | 'reasoning'; text: string }
  /** A tool call is streaming in: its name (once known) and how many argument characters arrived so far. */
  | { type: 'model.intent'; actor: string; effectId: string; index: number; name?: string; argumentsLength: number }
  /** An attempt failed with a retryable provider error; the next one starts after `delayMs`. */
  | { type: 'model.retrying'; actor: string; effectId: string; attempt: number; code: string; message: string; delayMs: number }
  | { type: 'model.fallback'; actor: string; effectId: string; attempt: number; code: string; message: string; from: string; to: string }
  | { type: 'effect.started'; actor: string; effectId: string; kind: string; label: string }
  | { type: 'effect.progress'; actor: string; effectId: string; message: string }
  | { type: 'effect.finished'; actor: string; effectId: string; kind: string; label: string; ok: boolean; durationMs: number };
