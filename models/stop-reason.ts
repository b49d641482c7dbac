import { z } from 'zod';

/** Why a model turn stopped, in core terms (adapters map vendor reasons onto these). */
export const StopReason = z.enum(['end_turn', 'tool_use', 'max_tokens', 'pause_turn', 'stop_sequence', 'content_filter', 'error']);
export type StopReason = z.infer<typeof StopReason>;
