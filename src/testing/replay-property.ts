import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Arbitrary } from 'fast-check';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { Script, ScriptInput } from '../../models/script.js';
import { isDerivedType, isRecordType, recordTypes } from '../../models/records.js';
import { canonicalEqual } from '../host/canonical-equal.js';
import { verifyRecords } from '../host/replay.js';
import { runScriptedSession, type ScriptedRun, type ScriptedRunOptions } from './run-scripted.js';
import { entriesOf } from '../host/step-record.js';

export interface ReplayPropertyOptions<S extends Script | ScriptInput = Script | ScriptInput> {
  /** Arbitrary scripts in the scripted provider's format (a fast-check arbitrary, such as `fc.Arbitrary<Script>`). */
  scripts: Arbitrary<S>;
  /** Prepare each fresh temporary workspace (seed files) before its session runs. */
  setup?: (workspace: string) => Promise<void>;
  /** Harness options for every run (tools, permissions, budgets…): an object, or a function of the generated script. */
  rein?: ScriptedRunOptions['rein'] | ((script: S) => ScriptedRunOptions['rein']);
  answer?: ScriptedRunOptions['answer'];
  /** Extra checks on each run, after the replay property held. */
  check?: (run: ScriptedRun) => void | Promise<void>;
  /** fast-check run count (default: `FC_RUNS` from the environment, else 25). */
  numRuns?: number;
}

const runsFromEnvironment = (): number => {
  const value = Number(process.env.FC_RUNS);
  return Number.isInteger(value) && value > 0 ? value : 25;
};

/**
 * Every record of a run is exactly what its type's schema accepts: it parses, and parsing changes nothing. The host
 * stores the settlements rein's executors build without parsing them on each step; this is where that trust is checked.
 */
export const assertRecordsMatchSchemas = (records: readonly RecordEnvelope[]): void => {
  // A step record's entries and folded facts are checked as the records they stand for, too.
  for (const record of records.flatMap((stored) => (stored.type === 'step.derived' || stored.type === 'tool.started' ? [stored, ...entriesOf(stored).filter((entry) => entry !== stored)] : [stored]))) {
    if (!isRecordType(record.type)) throw new Error(`${record.stream} seq ${record.seq}: unknown record type ${record.type}`);
    const parsed = recordTypes[record.type].data.safeParse(record.data);
    if (!parsed.success) throw new Error(`${record.stream} seq ${record.seq}: ${record.type} does not match its schema: ${parsed.error.message}`);
    if (!canonicalEqual(parsed.data, record.data)) throw new Error(`${record.stream} seq ${record.seq}: ${record.type} changes when parsed by its schema (a key its schema does not know?)`);
  }
};

/**
 * The replay property over scripted sessions: for every generated script, run the session live in a fresh
 * workspace, then replay its log — the rebuilt final snapshot must deep-equal the live one, every derived record
 * must be regenerated exactly, and every record must be exactly what its schema accepts. Throws fast-check's counterexample (shrunk) when it fails.
 */
export const assertReplayProperty = async <S extends Script | ScriptInput>(options: ReplayPropertyOptions<S>): Promise<void> => {
  // fast-check (~390 KB) loads here, not with `rein/testing`: most tests that import the door never run the property.
  const { default: fc } = await import('fast-check');
  await fc.assert(
    fc.asyncProperty(options.scripts, async (script) => {
      const workspace = await mkdtemp(join(tmpdir(), 'rein-replay-property-'));
      try {
        await options.setup?.(workspace);
        const rein = typeof options.rein === 'function' ? options.rein(script) : options.rein;
        const run = await runScriptedSession({ script, workspace, ...(rein ? { rein } : {}), ...(options.answer ? { answer: options.answer } : {}) });
        const replay = verifyRecords(run.session.id, run.records);
        const live = run.session.persistedSnapshot();
        if (!canonicalEqual(replay.tree?.persisted(), live)) throw new Error(`replay of ${run.session.id} rebuilt a different snapshot than the live run`);
        const derived = run.records.filter((record) => isDerivedType(record.type)).length;
        if (replay.regenerated !== derived) throw new Error(`replay regenerated ${replay.regenerated} of ${derived} derived records`);
        assertRecordsMatchSchemas(run.records);
        await options.check?.(run);
      } finally {
        await rm(workspace, { recursive: true, force: true });
      }
    }),
    { numRuns: options.numRuns ?? runsFromEnvironment() },
  );
};
