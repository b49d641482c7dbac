import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/**
 * Why a model turn stopped, in core terms (adapters map vendor reasons onto these). `unknown`: a vendor reason no
 * adapter knows (a new one, a server's own) — recorded as such, with the vendor's word beside it (`rawStopReason`),
 * never passed off as `end_turn`.
 */
export const StopReason = lazySchema(() => z.enum(['end_turn', 'tool_use', 'max_tokens', 'pause_turn', 'stop_sequence', 'content_filter', 'error', 'unknown']));
export type StopReason = z.infer<typeof StopReason>;
