/**
 * Type-level proof that the testing kit takes scripts typed as scripts, as a host's test suite writes them under
 * `strict` (imports only from the public doors): `tsc -p tests` fails if a script goes back to `unknown` or a
 * malformed one type-checks.
 */
import fc from 'fast-check';
import type { Script, ScriptInput } from 'rein';
import { assertReplayProperty, runScriptedSession, type ReplayPropertyOptions, type ScriptedRunOptions } from 'rein/testing';

// A parsed script and one as written (defaults left out) are both scripts.
const parsed: Script = { turns: [{ text: 'done', toolCalls: [] }], agents: {} };
const written: ScriptInput = { turns: [{ text: 'done' }] };
export const options: ScriptedRunOptions[] = [{ script: parsed, workspace: '/tmp' }, { script: written, workspace: '/tmp' }];

// @ts-expect-error a script's turns are objects, not strings
export const wrongTurns: ScriptedRunOptions = { script: { turns: ['done'] }, workspace: '/tmp' };
// @ts-expect-error a tool call needs a name
export const namelessCall: ScriptInput = { turns: [{ toolCalls: [{ arguments: {} }] }] };

// fc.Arbitrary<Script> is what `scripts` takes, and `rein` may be a function of the generated script.
declare const scripts: fc.Arbitrary<Script>;
export const property: ReplayPropertyOptions<Script> = { scripts, rein: (script) => ({ budgets: { maxTurns: script.turns.length + 1 } }) };
export const asserted: Promise<void> = assertReplayProperty({ scripts, rein: (script: Script) => ({ systemPrompt: `${script.turns.length} turns` }) });
// @ts-expect-error an arbitrary of anything is not an arbitrary of scripts
export const loose: Promise<void> = assertReplayProperty({ scripts: fc.anything() });
export const ran = runScriptedSession({ script: written, workspace: '/tmp' });
