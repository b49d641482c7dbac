import * as z from 'zod';
import { StateValue } from './actor.records.js';
import { EffectKind } from './effect.records.js';
import { lazySchema } from './lazy-schema.js';

/**
 * One actor transition of a step: `[0, actor, event, from, to]`. A state value is stored as its dotted path
 * (`running.awaitingModel` for `{ running: 'awaitingModel' }`) wherever that path reads back as the same value.
 */
export const StepTransition = lazySchema(() => z.tuple([z.literal(0), z.string().min(1), z.string().min(1), StateValue.nullable(), StateValue]));
export type StepTransition = z.infer<typeof StepTransition>;

/** One effect a machine requested in the step: `[1, actor, effectId, kind, args, corr?]`; it starts once the step is written. */
export const StepIntent = lazySchema(() => z.tuple([z.literal(1), z.string().min(1), z.string().min(1), EffectKind, z.record(z.string(), z.unknown()), z.string().optional()]));
export type StepIntent = z.infer<typeof StepIntent>;

/**
 * Any other record a machine (or the capability deriver) derived in the step: `[2, actor, type, data, corr?]` — a
 * typestate witness (`turn.*`, its lists left out where the inputs hold them: see `compactWitness`), `session.ended`,
 * `delegation.*`, `report.rejected`, `capability.diff`. Since v2 a `capability.diff` whose data equals, in every member
 * but `effectId`, that of an earlier `capability.diff` entry of the same record is stored as `{ effectId, sameAs }`,
 * `sameAs` the index of that whole entry in `derived` (the children one delegation spawns mostly share one visible set);
 * readers get it whole through `draftOfEntry(entry, derived)`, `flattenRecords` or `foldEntries`.
 */
export const StepEmitted = lazySchema(() => z.tuple([z.literal(2), z.string().min(1), z.string().min(1), z.record(z.string(), z.unknown()), z.string().optional()]));
export type StepEmitted = z.infer<typeof StepEmitted>;

export const StepEntry = lazySchema(() => z.union([StepTransition, StepIntent, StepEmitted]));
export type StepEntry = z.infer<typeof StepEntry>;

/**
 * A fact the step's effect reported with its settlement, folded into the step record instead of a record of its own:
 * `[type, data, corr?, atOffset?]` — `atOffset` is the fact's time minus the step record's `at` (ms, at most 0), left
 * off when 0; `corr` is null when only `atOffset` follows. Only `context.projected`, `model.attempted` and a read-only
 * tool's `tool.started` are folded; every other fact keeps its own record.
 */
export const StepFact = lazySchema(() => z.tuple([z.string().min(1), z.record(z.string(), z.unknown()), z.string().nullable().optional(), z.number().int().optional()]));
export type StepFact = z.infer<typeof StepFact>;

/**
 * transition · what one step derived, in one record written right after its input (same batch, `cause` = the input's
 * id): `derived` — every actor transition, effect intent and derived record of the step, in the order the machines
 * produced them; replay regenerates it and compares it (a `capability.diff` stored by reference, v2, is compared
 * whole) — and `facts`, what the step's effect reported with its settlement (not regenerated). Every applied input is
 * followed by exactly one.
 */
export const StepDerived = lazySchema(() => z.object({
  derived: z.array(StepEntry),
  facts: z.array(StepFact).optional(),
}));
export type StepDerived = z.infer<typeof StepDerived>;

/** The record types whose data `step.derived` can fold in as a fact (README: *Record types*). */
export const foldedFactTypes: ReadonlySet<string> = new Set(['context.projected', 'model.attempted', 'tool.started']);
