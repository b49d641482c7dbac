import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { parseFixture } from '../../scripts/fixtures/fixture-format.js';
import { LiveContextView } from '../../src/projections/context-live.js';
import { contextProjection, type ContextView } from '../../src/projections/context.view.js';
import { reducerOf } from '../../src/projections/projection.js';
import { propertyRuns } from '../support/temp-dir.js';

const logsDirectory = fileURLToPath(new URL('../fixtures/logs/', import.meta.url));

/** The golden logs with agents beyond the root (delegations in both layouts) and a few plain ones. */
const names = ['delegation', 'step-delegation', 'specref-delegation', 'step2-delegation-siblings', 'step-tools-approvals', 'step-hooks-plugins', 'step-fork', 'tools-approvals'];

const loadLogs = async (): Promise<Array<{ name: string; records: RecordEnvelope[] }>> => {
  const present = new Set(await readdir(logsDirectory));
  const logs = [];
  for (const name of names.filter((candidate) => present.has(`${candidate}.ndjson`))) {
    logs.push({ name, records: upcastRecords(parseFixture(await readFile(join(logsDirectory, `${name}.ndjson`), 'utf8'), name).records) });
  }
  return logs;
};

const actorsOf = (view: ContextView): string[] => [...view.actors.keys()].sort();

describe('the live context view (folded per agent when read)', () => {
  it('gives the agent it is read for exactly the reducer\'s view, whenever it is read, on golden logs with delegations', async () => {
    const logs = await loadLogs();
    expect(logs.map((log) => log.name)).toContain('step2-delegation-siblings');
    for (const { name, records } of logs) {
      const projection = contextProjection();
      const reduce = reducerOf(projection);
      // The reducer's view after each record.
      const eager: ContextView[] = [];
      let view = projection.initial();
      for (const record of records) eager.push((view = reduce(view, record)));
      const everyActor = [...new Set(['root', ...eager.flatMap(actorsOf), ...records.map((record) => record.actor)])];
      fc.assert(
        fc.property(fc.array(fc.option(fc.constantFrom(...everyActor), { freq: 2 }), { minLength: records.length, maxLength: records.length }), (reads) => {
          const live = new LiveContextView(projection);
          records.forEach((record, index) => {
            live.observe(record);
            live.observe(record); // a repeat is ignored, as by the reducer
            const actor = reads[index];
            if (actor === null || actor === undefined) return;
            const seen = live.viewFor(actor);
            const wanted = eager[index]!;
            expect(seen.seq, `${name} #${record.seq}`).toBe(wanted.seq);
            expect(seen.goal).toEqual(wanted.goal);
            expect(seen.workspace).toEqual(wanted.workspace);
            expect(seen.actors.get(actor), `${name} #${record.seq} ${actor}`).toEqual(wanted.actors.get(actor));
          });
          const whole = live.whole();
          const last = eager.at(-1)!;
          expect(actorsOf(whole)).toEqual(actorsOf(last));
          for (const actor of actorsOf(last)) expect(whole.actors.get(actor)).toEqual(last.actors.get(actor));
        }),
        { numRuns: propertyRuns(25) },
      );
    }
  });

  it('never folds an ended child\'s last round, and refuses a gap', async () => {
    const { records } = (await loadLogs()).find((log) => log.name === 'step2-delegation-siblings')!;
    const projection = contextProjection();
    const applied: RecordEnvelope[] = [];
    const counting = { ...projection, apply: (view: ContextView, record: RecordEnvelope) => (applied.push(record), projection.apply(view, record)) };
    const live = new LiveContextView(counting);
    for (const record of records) live.observe(record);
    // Nobody read a child: of the children's records only the delegation ones were applied (the root's, before its
    // delegation started and joined, were folded for them).
    const children = applied.filter((record) => record.actor.startsWith('root/delegation-'));
    expect(children.length).toBeGreaterThan(0);
    for (const record of children) expect(record.type.startsWith('delegation.'), record.type).toBe(true);
    expect(records.some((record) => record.actor.startsWith('root/delegation-') && record.type === 'model.responded')).toBe(true);
    expect(() => live.observe({ ...records.at(-1)!, seq: records.at(-1)!.seq + 2 })).toThrow(expect.objectContaining({ code: 'PROJECTION_GAP' }));
  });
});
