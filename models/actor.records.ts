import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** An XState state value: a state name, or an object of nested values for compound/parallel states. */
export type StateValue = string | { [key: string]: StateValue };
export const StateValue: z.ZodType<StateValue> = z.lazy(() => z.union([z.string(), z.record(z.string(), StateValue)]));

/** transition · one actor changed state while processing one event (the derived audit trail). */
export const ActorTransitioned = lazySchema(() => z.object({
  actor: z.string().min(1),
  event: z.string().min(1),
  from: StateValue.nullable(),
  to: StateValue,
}));
export type ActorTransitioned = z.infer<typeof ActorTransitioned>;
