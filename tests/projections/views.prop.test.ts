import type { ScriptInput } from 'rein';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { filter, firstValueFrom, from, lastValueFrom, Subject, toArray as collect } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { createMemoryEventStore, runScriptedSession } from 'rein/testing';
import { contextProjection } from '../../src/projections/context.view.js';
import { memoryProjection } from '../../src/projections/memory.view.js';
import { liveView, rebuildView, tailView, type Projection, type ViewState } from '../../src/projections/projection.js';
import { traceProjection } from '../../src/projections/trace.view.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

/** A verification tool (its name makes the default classifier record `verification.recorded`). */
const checkTool = defineTool({
  name: 'check',
  description: 'Run the checks.',
  parameters: z.object({ pass: z.boolean() }).strict(),
  annotations: readOnlyAnnotations,
  risk: 'execute',
  sideEffect: 'process',
  resumePolicy: 'rerun-after-check',
  execute: async ({ pass }) => (pass ? { ok: true, output: 'all checks passed' } : { ok: false, code: 'NonZeroExit', message: 'not ok 1 - check failed\nexpected 6, got -6' }),
});

const toolCall = fc.oneof(
  fc.record({ name: fc.constant('read'), arguments: fc.record({ path: fc.constantFrom('a.txt', 'b.txt', 'missing.txt') }) }),
  fc.record({ name: fc.constant('write'), arguments: fc.record({ path: fc.constantFrom('a.txt', 'new.txt', '../out.txt'), content: fc.string({ maxLength: 30 }) }) }),
  fc.record({ name: fc.constant('list_dir'), arguments: fc.record({ path: fc.constantFrom('.', 'nowhere') }) }),
  fc.record({ name: fc.constant('check'), arguments: fc.record({ pass: fc.boolean() }) }),
  fc.record({ name: fc.constant('read'), arguments: fc.constant({}) }),
);
const script = fc.record({
  turns: fc.tuple(fc.array(fc.record({ text: fc.string({ maxLength: 20 }), toolCalls: fc.array(toolCall, { maxLength: 3 }) }), { maxLength: 7 }), fc.boolean()).map(([turns, finish]) => (finish ? [...turns, { text: 'Done.', toolCalls: [] }] : turns)),
});

const candidate = fc.constantFrom('c1', 'c2', 'c3');
const stored = fc.constantFrom('m1', 'm2', 'm3');
const scope = fc.record({ level: fc.constantFrom('user', 'repo', 'task'), key: fc.constantFrom('k', 'other') });
/** Memory governance records, referring to a small pool of ids so some hit and some miss. */
const memoryRecord = fc.oneof(
  fc.record({ type: fc.constant('memory.proposed'), data: fc.record({ candidateId: candidate, content: fc.constantFrom('uses npm test', 'prefers small diffs'), kind: fc.constantFrom('project_fact', 'user_preference'), scope, source: fc.constant({ type: 'explicit_user', eventIds: ['e1'] }), confidence: fc.constantFrom('low', 'medium', 'high'), conflictKeys: fc.constant([]), createdBy: fc.constant('runtime') }) }),
  fc.record({ type: fc.constant('memory.reviewed'), data: fc.record({ candidateId: candidate, outcome: fc.constantFrom('approved', 'needs_review', 'rejected', 'downgraded'), reviewer: fc.constant('governance'), reason: fc.constant('checked') }) }),
  fc.record({ type: fc.constant('memory.promoted'), data: fc.record({ recordId: stored, candidateId: candidate, content: fc.constant('uses npm test'), kind: fc.constant('project_fact'), scope: fc.record({ level: fc.constantFrom('repo', 'user'), key: fc.constant('k') }), confidence: fc.constantFrom('medium', 'high'), authority: fc.constantFrom('hint', 'rule'), sourceRefs: fc.constant(['#1']), version: fc.constant(1), supersedes: fc.option(fc.array(stored, { maxLength: 2 }), { nil: undefined }), approvedAt: fc.constant(1) }, { requiredKeys: ['recordId', 'candidateId', 'content', 'kind', 'scope', 'confidence', 'authority', 'sourceRefs', 'version', 'approvedAt'] }) }),
  fc.record({ type: fc.constant('memory.rejected'), data: fc.record({ candidateId: candidate, reason: fc.constant('no') }) }),
  fc.record({ type: fc.constant('memory.revoked'), data: fc.record({ recordId: stored, reason: fc.constant('forget it'), by: fc.constant('user') }) }),
  fc.record({ type: fc.constant('memory.expired'), data: fc.record({ recordId: stored, reason: fc.constant('ttl') }) }),
);

/** A real scripted session's records with memory records spliced in at random places, as drafts for a new stream. */
const sessionDrafts = async (generated: ScriptInput, memory: Array<{ type: string; data: unknown }>, positions: number[]): Promise<RecordDraft[]> => {
  const workspace = await makeTempDir();
  try {
    await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
    await writeFile(join(workspace.path, 'b.txt'), 'bravo\n');
    await mkdir(join(workspace.path, 'sub'));
    const run = await runScriptedSession({ script: generated, workspace: workspace.path, rein: { tools: [...builtinTools(), checkTool] }, budgets: { maxTurns: 10, maxToolCalls: 20 } });
    const drafts: RecordDraft[] = run.records.map(({ stream: _stream, seq: _seq, ...draft }) => draft);
    memory.forEach((entry, index) => {
      const at = positions[index]! % (drafts.length + 1);
      drafts.splice(at, 0, { id: `mem-${index}`, type: entry.type, v: 1, at: 1, actor: 'root', data: entry.data });
    });
    return drafts;
  } finally {
    await workspace.remove();
  }
};

/** Append drafts to a fresh stream in batches of the given sizes (cycling), while a live view tails it. */
const liveOverTail = async <View extends ViewState>(projection: Projection<View>, drafts: readonly RecordDraft[], sizes: readonly number[]): Promise<{ live: View; records: RecordEnvelope[] }> => {
  const store = createMemoryEventStore();
  const live$ = tailView(store, 'view-test', projection);
  const done = firstValueFrom(live$.pipe(filter((view) => view.seq === drafts.length)));
  let head = 0;
  for (let index = 0; head < drafts.length; index++) {
    const size = Math.max(1, sizes[index % sizes.length] ?? 1);
    const batch = drafts.slice(head, head + size);
    await store.append('view-test', batch, { expectedSeq: head });
    head += batch.length;
  }
  const live = await done;
  const records = await store.read('view-test');
  await store.close();
  return { live, records };
};

const projections: Array<Projection<ViewState>> = [contextProjection() as Projection<ViewState>, traceProjection as Projection<ViewState>, memoryProjection as Projection<ViewState>];

describe('every view: live equals rebuilt', () => {
  it('scan over a tail fed in random batches equals reduce; duplicates and restarts converge; gaps are refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        script,
        fc.array(memoryRecord, { maxLength: 12 }),
        fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 20 }),
        fc.nat(),
        fc.nat(),
        async (generated, memory, positions, sizes, duplicates, cut, offsetPick) => {
          const drafts = await sessionDrafts(generated, memory, positions);
          for (const projection of projections) {
            const { live, records } = await liveOverTail(projection, drafts, sizes);
            const rebuilt = rebuildView(projection, records);
            expect(live).toEqual(rebuilt);

            const noisy: RecordEnvelope[] = [];
            records.forEach((record, index) => {
              noisy.push(record);
              for (const pick of duplicates) if (pick % records.length === index) noisy.push(records[pick % (index + 1)]!);
            });
            const subject = new Subject<RecordEnvelope>();
            const duplicated = lastValueFrom(liveView(projection, subject));
            for (const record of noisy) subject.next(record);
            subject.complete();
            expect(await duplicated).toEqual(rebuilt);

            const k = cut % (records.length + 1);
            const prefix = rebuildView(projection, records.slice(0, k));
            const offset = 1 + (offsetPick % (k + 1));
            const restarted = await lastValueFrom(liveView(projection, from(records.slice(offset - 1)), prefix).pipe(collect()));
            expect(restarted.length === 0 ? prefix : restarted[restarted.length - 1]).toEqual(rebuilt);
            if (k + 2 <= records.length) {
              await expect(lastValueFrom(liveView(projection, from(records.slice(k + 1)), prefix))).rejects.toMatchObject({ code: 'PROJECTION_GAP' });
            }
          }
        },
      ),
      { numRuns: propertyRuns(15) },
    );
  });
});
