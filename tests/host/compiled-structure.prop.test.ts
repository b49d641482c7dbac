import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesDescriptor } from '../../src/host/compiled-structure.js';
import { propertyRuns } from '../support/temp-dir.js';

/** xstate 5's `matchesEventDescriptor` as it is written there (token by token), without its dev warnings. */
const xstateMatches = (eventType: string, descriptor: string): boolean => {
  if (descriptor === eventType || descriptor === '*') return true;
  if (!descriptor.endsWith('.*')) return false;
  const partial = descriptor.split('.');
  const tokens = eventType.split('.');
  for (let index = 0; index < partial.length; index++) {
    if (partial[index] === '*') return index === partial.length - 1;
    if (partial[index] !== tokens[index]) return false;
  }
  return true;
};

const token = fc.constantFrom('', 'a', 'b', 'ab', 'xstate', 'done', 'actor', 'root/turn-1', 'root/turn-12', '-', '/');
const dotted = fc.array(token, { minLength: 1, maxLength: 5 }).map((tokens) => tokens.join('.'));

describe('the compiled structure', () => {
  it('matches an event type to a descriptor as xstate does, for every descriptor form the compiler accepts', () => {
    fc.assert(
      fc.property(dotted, dotted, fc.constantFrom('exact', 'partial', 'wildcard'), fc.boolean(), (type, base, form, related) => {
        const descriptor = form === 'wildcard' ? '*' : form === 'partial' ? `${base}.*` : base;
        // Half the time the type shares the descriptor's prefix (the interesting case), otherwise it is unrelated.
        const eventType = related && form === 'partial' ? `${base}${type.startsWith('.') || type === '' ? '' : '.'}${type}` : type;
        expect(matchesDescriptor(eventType, descriptor)).toBe(xstateMatches(eventType, descriptor));
      }),
      { numRuns: propertyRuns(500) },
    );
    for (const [eventType, descriptor] of [['xstate.done.actor.root/turn-7', 'xstate.done.actor.*'], ['xstate.done.actor', 'xstate.done.actor.*'], ['xstate.done.actors', 'xstate.done.actor.*'], ['xstate.done', 'xstate.done.actor.*'], ['a', '.*'], ['', '.*'], ['.a', '.*']] as const) {
      expect(matchesDescriptor(eventType, descriptor), `${eventType} ~ ${descriptor}`).toBe(xstateMatches(eventType, descriptor));
    }
  });
});
