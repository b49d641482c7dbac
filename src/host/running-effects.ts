import type { EffectKind } from '../../models/effect.records.js';

/**
 * One effect the host is executing. Aborted through `abort`, which also runs the abort hooks: the host's safety net
 * and the executors' own waits (`onAbort`) hook the abort instead of listening on a signal, and the AbortController
 * and its signal are made only when someone reads `signal` — an EventTarget listener, and the signal itself, cost
 * microseconds per effect on the step path, where nearly no effect is ever aborted.
 */
export class RunningEffect {
  // `declare`d and set in the constructor: a class field is defined by an initializer function of its own (a call
  // per object) and then assigned again; made per effect.
  /** Its executor returned (the settlement is on its way to the queue): nothing is left to abort. */
  declare finished?: boolean;
  /** A tool call whose `tool.started` is durable: it settles on the record even if its agent is stopped meanwhile. */
  declare started?: boolean;
  /** `abort` was called (the signal, made now or later, is aborted with `reason`). */
  declare aborted: boolean;
  /** What `abort` was given. */
  declare reason: unknown;
  /** The host's own hook: called once, after the others, on the first `abort` (set while the host waits on the executor). */
  declare onAbort: (() => void) | undefined;
  declare private controller: AbortController | undefined;
  declare private hooks: Array<(() => void) | undefined> | undefined;
  declare readonly kind: EffectKind;
  declare readonly actor: string;
  /** Its actor's path and every ancestor's (`pathsOf`), computed once when it is added to `RunningEffects`. */
  declare paths: readonly string[];

  constructor(kind: EffectKind, actor: string) {
    this.kind = kind;
    this.actor = actor;
    this.aborted = false;
    this.reason = undefined;
    this.onAbort = undefined;
    this.controller = undefined;
    this.hooks = undefined;
    this.paths = noPaths;
  }

  /** The effect's signal, made on first read (aborted with `reason` if the effect already was). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /**
   * Run `hook` once on the first `abort` (at once if it already happened; then the removal does nothing); returns its
   * removal. The executor's side of `EffectContext.onAbort`.
   */
  addAbortHook(hook: () => void): () => void {
    if (this.aborted) {
      hook();
      return noRemoval;
    }
    const hooks = (this.hooks ??= []);
    const index = hooks.push(hook) - 1;
    return () => {
      if (hooks[index] === hook) hooks[index] = undefined;
    };
  }

  /**
   * Abort the effect with `reason` (only the first abort counts, as for an AbortController): its signal's listeners
   * (if anyone made it) run, then the hooks in the order they were added, then the host's hook.
   */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const hooks = this.hooks;
    this.hooks = undefined;
    if (hooks) for (const hook of hooks) hook?.();
    const hook = this.onAbort;
    this.onAbort = undefined;
    hook?.();
  }
}

const noRemoval = (): void => undefined;
const noPaths: readonly string[] = [];

/** Effects that only wait for time: the session counts as quiet (waiting for someone) while only these run. */
const backgroundKinds: ReadonlySet<EffectKind> = new Set(['startTimer']);

/** `root/delegation-2/a` → `root/delegation-2/a`, `root/delegation-2`, `root`. */
const pathsOf = (actor: string): string[] => {
  const paths = [actor];
  for (let index = actor.lastIndexOf('/'); index > 0; index = actor.lastIndexOf('/', index - 1)) paths.push(actor.slice(0, index));
  return paths;
};

/**
 * The host's running effects, indexed by every ancestor path of their actor and with a count of the busy ones, so
 * "what does this ended actor (or its descendants) still run" and "is the session busy" cost the same whatever the
 * number of agents — a delegation of 1,000 children must not make each child's end scan every running effect.
 */
export class RunningEffects {
  private readonly byId = new Map<string, RunningEffect>();
  private readonly byPath = new Map<string, Set<string>>();
  /** Running effects other than timers: what the session is busy with (a field, read on every step; only this class changes it). */
  busy = 0;

  has(effectId: string): boolean {
    return this.byId.has(effectId);
  }

  add(effectId: string, effect: RunningEffect): void {
    this.byId.set(effectId, effect);
    if (!backgroundKinds.has(effect.kind)) this.busy++;
    effect.paths = pathsOf(effect.actor);
    for (const path of effect.paths) {
      let ids = this.byPath.get(path);
      if (!ids) this.byPath.set(path, (ids = new Set()));
      ids.add(effectId);
    }
  }

  delete(effectId: string): void {
    const effect = this.byId.get(effectId);
    if (!effect) return;
    this.byId.delete(effectId);
    if (!backgroundKinds.has(effect.kind)) this.busy--;
    for (const path of effect.paths) {
      const ids = this.byPath.get(path);
      ids?.delete(effectId);
      if (ids?.size === 0) this.byPath.delete(path);
    }
  }

  /** Mark a running effect's executor as returned (see `RunningEffect.finished`). */
  markFinished(effectId: string): void {
    const effect = this.byId.get(effectId);
    if (effect) effect.finished = true;
  }

  /** Mark a running tool call as started (its `tool.started` is written). */
  markStarted(effectId: string): void {
    const effect = this.byId.get(effectId);
    if (effect) effect.started = true;
  }

  /** True when the running effect's tool call has a durable `tool.started`. */
  started(effectId: string): boolean {
    return this.byId.get(effectId)?.started === true;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  values(): IterableIterator<RunningEffect> {
    return this.byId.values();
  }

  /** The running effects of the actors at `paths` and of their descendants, as `[effectId, effect]`. */
  ownedBy(paths: readonly string[]): Array<[string, RunningEffect]> {
    // A turn's actor stops every round trip with nothing left running: no Map and no array for that.
    if (paths.length === 1 && !this.byPath.has(paths[0]!)) return [];
    const found = new Map<string, RunningEffect>();
    for (const path of paths) for (const effectId of this.byPath.get(path) ?? []) found.set(effectId, this.byId.get(effectId)!);
    return [...found];
  }
}
