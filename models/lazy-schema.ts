import * as z from 'zod';

/**
 * A value built on first use behind the name it will have: `lazySchema(() => z.object({...}))` returns a stand-in
 * that builds the schema the first time anything reads it (a property, `instanceof`, a key) and from then on forwards
 * every operation to it. The record schemas, tool parameters, config files and the serve API use it so that
 * `import('rein')` does not build thousands of zod schemas most processes never parse with (issue 31 §3); the type is
 * the built schema's, so `z.infer<typeof X>` is unchanged.
 *
 * A schema with metadata passes it as `meta` instead of calling `.meta()` / `.describe()` in `build`:
 * `lazySchema(() => z.object({...}), { id: 'SessionRow' })`. zod's registry is keyed by identity, so the stand-in
 * itself is what is registered (now, in declaration order, as `.meta()` would have), and it stays the one identity
 * every use sees: its methods run with the stand-in as `this` (`X.optional()` wraps the stand-in, not the built
 * schema), and the built schema is a clone of `build()`'s result whose parent is that result, as `.meta()` makes.
 * `z.toJSONSchema` then writes the same `$ref`s and metadata as for `build().meta(meta)`. A `build` must not call
 * `.meta()`/`.describe()` on the schema it returns (inner schemas may).
 */
export function lazySchema<T extends object>(build: () => T, meta?: z.GlobalMeta): T {
  let built: T | undefined;
  const self = (): T => {
    if (built === undefined) {
      const made = build();
      built = meta === undefined ? made : ((made as unknown as z.ZodType).clone() as unknown as T);
    }
    return built;
  };
  // With metadata, a getter (zod binds its methods on first read) runs on the stand-in, so what it returns or
  // caches refers to the registered identity; without, on the built schema, as a plain reference to it would.
  const receiver = (stand: T): T => (meta === undefined ? self() : stand);
  const stand: T = new Proxy({} as T, {
    get: (_target, key) => Reflect.get(self(), key, receiver(stand)),
    set: (_target, key, value) => Reflect.set(self(), key, value, receiver(stand)),
    has: (_target, key) => Reflect.has(self(), key),
    ownKeys: () => Reflect.ownKeys(self()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(self(), key);
      // The stand-in's own target holds nothing, so a proxy may only report configurable properties.
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(self(), key, descriptor),
    deleteProperty: (_target, key) => Reflect.deleteProperty(self(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(self()),
  });
  if (meta !== undefined) z.globalRegistry.add(stand as unknown as z.ZodType, meta);
  return stand;
}

/**
 * The same stand-in for any other object that is costly to build and that many processes never use: the exported
 * state machines (`setup(...).createMachine(...)` builds every state node; six of them cost `import('rein')` ~10 ms).
 * `lazyValue(() => setup({...}).createMachine({...}))` keeps the name, the type and the identity every user sees (an
 * actor's `logic` is the stand-in); xstate binds a machine's `transition`, `getInitialSnapshot`, … to the built one,
 * so running it reads the stand-in once per call.
 */
export const lazyValue = <T extends object>(build: () => T): T => lazySchema(build);
