import { describe, expect, it } from 'vitest';
import { RunningEffect } from '../../src/host/running-effects.js';
import { isAborted, whenAborted } from '../../src/effects/abort-hooks.js';

describe('RunningEffect: abort hooks without a signal', () => {
  it('runs its hooks once, in order, then the host hook, and makes no signal for them', () => {
    const effect = new RunningEffect('executeTool', 'root');
    const calls: string[] = [];
    effect.addAbortHook(() => calls.push('a'));
    const removeB = effect.addAbortHook(() => calls.push('b'));
    effect.addAbortHook(() => calls.push('c'));
    effect.onAbort = () => calls.push('host');
    removeB();
    const reason = new Error('the wall-time budget ran out');
    effect.abort(reason);
    effect.abort(new Error('second'));
    expect(calls).toEqual(['a', 'c', 'host']);
    expect(effect.aborted).toBe(true);
    // A signal read after the abort is made aborted, with the first abort's reason.
    expect(effect.signal.aborted).toBe(true);
    expect(effect.signal.reason).toBe(reason);
  });

  it('a hook added after the abort runs at once; a signal made before it aborts with it and its listeners run first', () => {
    const effect = new RunningEffect('callModel', 'root');
    const calls: string[] = [];
    const signal = effect.signal;
    signal.addEventListener('abort', () => calls.push('listener'));
    effect.addAbortHook(() => calls.push('hook'));
    effect.abort(undefined);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('AbortError');
    const late = effect.addAbortHook(() => calls.push('late'));
    late();
    expect(calls).toEqual(['listener', 'hook', 'late']);
  });

  it('isAborted and whenAborted go through the hooks when offered, and through the signal otherwise', () => {
    const effect = new RunningEffect('callModel', 'root');
    let made = 0;
    const hooked = {
      get signal() {
        made++;
        return effect.signal;
      },
      get aborted() {
        return effect.aborted;
      },
      onAbort: (hook: () => void) => effect.addAbortHook(hook),
    };
    const seen: string[] = [];
    const remove = whenAborted(hooked, () => seen.push('hooked'));
    expect(isAborted(hooked)).toBe(false);
    effect.abort(new Error('stop'));
    remove();
    expect(isAborted(hooked)).toBe(true);
    expect(made).toBe(0);

    const controller = new AbortController();
    const plain = { signal: controller.signal };
    const removePlain = whenAborted(plain, () => seen.push('removed'));
    removePlain();
    whenAborted(plain, () => seen.push('plain'));
    expect(isAborted(plain)).toBe(false);
    controller.abort();
    expect(isAborted(plain)).toBe(true);
    whenAborted(plain, () => seen.push('already'));
    expect(seen).toEqual(['hooked', 'plain', 'already']);
  });
});
