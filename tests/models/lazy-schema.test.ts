import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createActor, setup } from 'xstate';
import { lazySchema, lazyValue } from '../../models/lazy-schema.js';

/** The JSON Schema of a registry of named schemas, as `/openapi.json` writes its components. */
const componentsOf = (schemas: readonly z.ZodType[]): unknown => {
  const registry = z.registry<{ id: string }>();
  for (const schema of schemas) registry.add(schema, { id: (z.globalRegistry.get(schema) as { id: string }).id });
  return z.toJSONSchema(registry, { target: 'draft-2020-12', unrepresentable: 'any', io: 'output', uri: (id) => `#/components/schemas/${id}` });
};

describe('lazySchema', () => {
  it('builds the schema on first use, once', () => {
    let builds = 0;
    const Row = lazySchema(() => {
      builds++;
      return z.object({ id: z.string().describe('the id') });
    });
    expect(builds).toBe(0);
    expect(Row.parse({ id: 'a' })).toEqual({ id: 'a' });
    expect(Row instanceof z.ZodType).toBe(true);
    expect(Row.safeParse({ id: 1 }).success).toBe(false);
    expect(builds).toBe(1);
  });

  it('with metadata, registers the stand-in now and writes the same JSON Schema as .meta() (ids, $refs, descriptions)', () => {
    const suffix = Math.random().toString(36).slice(2);
    const eager = (() => {
      const Outcome = z.enum(['ok', 'failed']).meta({ id: `EagerOutcome${suffix}` });
      const Row = z.object({ id: z.string(), outcome: Outcome.optional() }).meta({ id: `EagerRow${suffix}` });
      const List = z.object({ rows: z.array(Row), first: Row.optional() }).describe('a page of rows').meta({ id: `EagerList${suffix}` });
      const Detail = Row.extend({ notes: z.array(z.string()) }).meta({ id: `EagerDetail${suffix}` });
      return [Outcome, Row, List, Detail] as const;
    })();
    let built = 0;
    const lazy = (() => {
      const Outcome = lazySchema(() => (built++, z.enum(['ok', 'failed'])), { id: `LazyOutcome${suffix}` });
      const Row = lazySchema(() => (built++, z.object({ id: z.string(), outcome: Outcome.optional() })), { id: `LazyRow${suffix}` });
      const List = lazySchema(() => (built++, z.object({ rows: z.array(Row), first: Row.optional() }).describe('a page of rows')), { id: `LazyList${suffix}` });
      const Detail = lazySchema(() => (built++, Row.extend({ notes: z.array(z.string()) })), { id: `LazyDetail${suffix}` });
      return [Outcome, Row, List, Detail] as const;
    })();
    expect(built).toBe(0);
    // The registry knows the stand-in before anything built it (what `/openapi.json` looks up).
    expect(z.globalRegistry.get(lazy[1])).toEqual({ id: `LazyRow${suffix}` });
    const rename = (json: unknown) => JSON.parse(JSON.stringify(json).replaceAll(`Eager`, 'X').replaceAll('Lazy', 'X')) as unknown;
    expect(rename(componentsOf(lazy))).toEqual(rename(componentsOf(eager)));
    expect(rename(z.toJSONSchema(lazy[2], { io: 'input' }))).toEqual(rename(z.toJSONSchema(eager[2], { io: 'input' })));
    expect(built).toBe(4);
    // A method called on the stand-in wraps the stand-in (the registered identity), not the schema behind it.
    expect((lazy[1].optional()._zod.def as { innerType: unknown }).innerType).toBe(lazy[1]);
  });
});

describe('lazyValue', () => {
  it('stands in for a machine: built on first use, run by an actor, and the actor’s logic is the stand-in', () => {
    let builds = 0;
    const machine = lazyValue(() => {
      builds++;
      return setup({ types: { events: {} as { type: 'go' } } }).createMachine({ id: 'lazy', initial: 'idle', states: { idle: { on: { go: 'done' } }, done: { type: 'final' } } });
    });
    expect(builds).toBe(0);
    const actor = createActor(machine).start();
    actor.send({ type: 'go' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.logic).toBe(machine);
    expect(builds).toBe(1);
  });
});
