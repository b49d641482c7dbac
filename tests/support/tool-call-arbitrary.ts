import fc from 'fast-check';
import { lines } from './log-builder.js';

/** A settled tool call for a `LogBuilder` turn: one of three tools on one of three files, ok or failed, 0–120 lines out. */
export const toolCallArbitrary = fc.record({
  name: fc.constantFrom('read', 'write', 'list_dir'),
  arguments: fc.record({ path: fc.constantFrom('a.ts', 'b.ts', 'c.ts') }),
  status: fc.constantFrom('ok' as const, 'error' as const),
  observation: fc.tuple(fc.nat({ max: 120 }), fc.nat()).map(([count, seed]) => lines(count, `out-${seed}`)),
});
