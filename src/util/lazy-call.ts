/**
 * A promise-returning export whose module loads on its first call. `import('rein')` then reads and compiles only the
 * code a host needs to start (issue 31: the package loads what it uses); a host that calls `openLevelEventStore` or
 * `createRein` pays for that area's code at that call, once: the area's module is loaded one time and kept.
 *
 * The stand-in has the original's type, so callers and the published types see no difference; a synchronous throw of
 * the original would arrive as a rejection, as an `async` function's does (of the wrapped functions only `forkForRetry`
 * is not `async`, and it throws only on a `failure` its type rules out).
 */
export const lazyCall = <M, K extends keyof M & string>(load: () => Promise<M>, name: K): M[K] => {
  const call = async (...args: unknown[]): Promise<unknown> => ((await load())[name] as (...args: unknown[]) => Promise<unknown>)(...args);
  Object.defineProperty(call, 'name', { value: name });
  return call as M[K];
};

/** `load`, run once: every later call gets the same promise (the module is imported one time). */
export const once = <M>(load: () => Promise<M>): (() => Promise<M>) => {
  let loaded: Promise<M> | undefined;
  return () => (loaded ??= load());
};
