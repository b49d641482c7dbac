/**
 * A value built on first use behind the name it will have: `lazySchema(() => z.object({...}))` returns a stand-in
 * that builds the schema the first time anything reads it (a property, `instanceof`, a key) and from then on forwards
 * every operation to it. The record schemas use it so that `import('rein')` does not build ~2,400 zod schemas most
 * processes never parse with (issue 31 §3); the type is the built schema's, so `z.infer<typeof X>` is unchanged.
 * Not for schemas carrying metadata (`.meta()`, `.describe()`): zod's registry is keyed by identity, and a method
 * called through the stand-in (`X.optional()`) wraps the built schema, so both would reach `z.toJSONSchema` (a
 * duplicate `id`, or metadata missing on the stand-in).
 */
export const lazySchema = <T extends object>(build: () => T): T => {
  let built: T | undefined;
  const self = (): T => (built ??= build());
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(self(), key, self()),
    set: (_target, key, value) => Reflect.set(self(), key, value, self()),
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
};
