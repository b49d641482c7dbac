/**
 * Ephemeral events a host streams to subscribers while effects run. They are never persisted: everything that
 * matters for replay arrives later as records (the assembled reply, the settled tool result).
 */
export type LiveEvent =
  | { type: 'model.delta'; actor: string; effectId: string; channel: 'text' | 'reasoning'; text: string }
  | { type: 'effect.started'; actor: string; effectId: string; kind: string; label: string }
  | { type: 'effect.progress'; actor: string; effectId: string; message: string }
  | { type: 'effect.finished'; actor: string; effectId: string; kind: string; label: string; ok: boolean; durationMs: number };
