import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertRecordsMatchSchemas, createMemoryEventStore, verifyRecords } from 'rein/testing';
import { createRein } from '../../src/rein.js';
import { isDerivedType } from '../../models/records.js';
import { modeWithin } from '../../src/delegation/actor-rights.js';
import type { DelegationStarted } from '../../models/delegation.records.js';
import type { SessionCreated } from '../../models/session.records.js';
import type { PermissionMode } from '../../models/permission.records.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { delegationTree, treeProvider } from '../support/delegation-fixtures.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

const startedOf = (records: readonly RecordEnvelope[]) => flattenRecords(records).filter((record) => record.type === 'delegation.started').map((record) => record.data as DelegationStarted);

/** Every child's rights within its parent's at the moment it started: tools a subset, permission mode no wider. */
const checkRights = (records: readonly RecordEnvelope[], mode: PermissionMode) => {
  const created = records[0]!.data as SessionCreated;
  const rights = new Map<string, { tools: readonly string[]; mode: PermissionMode }>([['root', { tools: created.tools, mode }]]);
  for (const started of startedOf(records)) {
    const parent = rights.get(started.parent);
    expect(parent, `${started.child}'s parent ${started.parent} started first`).toBeDefined();
    for (const tool of started.task.tools) expect(parent!.tools, `${started.child} may use ${tool}`).toContain(tool);
    expect(modeWithin(started.task.permissionMode, parent!.mode)).toBe(true);
    rights.set(started.child, { tools: started.task.tools, mode: started.task.permissionMode });
  }
  // Every tool a child actually ran was one of its own (or the report every child has).
  for (const record of flattenRecords(records)) {
    if (record.type !== 'tool.started' || record.actor === 'root') continue;
    const own = rights.get(record.actor);
    expect(own, `${record.actor} ran a tool without a task package`).toBeDefined();
    expect([...own!.tools, 'submit_report']).toContain((record.data as { name: string }).name);
  }
};

describe('random delegation trees (depth ≤ 3, fan-out ≤ 5)', () => {
  it('live equals replay, a child never has more rights than its parent, and no child outlives the root', async () => {
    await fc.assert(
      fc.asyncProperty(delegationTree(3), fc.constantFrom<PermissionMode>('default', 'accept-edits', 'default', 'accept-edits', 'plan'), fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }), async (tree, mode, answers) => {
        const workspace = await makeTempDir();
        const store = createMemoryEventStore();
        try {
          await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
          const rein = await createRein({ store, workspace: workspace.path, provider: treeProvider(tree), permissions: { mode }, delegation: { maxDepth: 3, maxFanOut: 5 }, sandbox: { loginShell: false }, budgets: { maxTurns: 6, maxToolCalls: 8 } });
          const session = await rein.startSession({ task: 'Split the work. Never delete anything.' });
          let result = await session.whenQuiet();
          let asked = 0;
          while (result.status === 'paused') {
            const pending = session.pendingApprovals();
            if (pending.length === 0) break;
            for (const request of pending) {
              // An answer may end a child at once (it has no turn left), deciding a join that stops the children still
              // waiting: their questions are gone.
              const open = () => session.pendingApprovals().some((waiting) => waiting.approvalId === request.approvalId);
              if (!open()) continue;
              // The join may also decide while this answer waits its turn (the steps an earlier answer set off come
              // first): then the question is withdrawn and the answer refused — and only then.
              await session.approve(request.approvalId, { decision: answers[asked++ % answers.length] ? 'allow-once' : 'deny' }).catch((error: unknown) => {
                if ((error as { code?: string }).code !== 'APPROVAL_NOT_FOUND' || open()) throw error;
              });
            }
            result = await session.whenQuiet();
          }
          expect(result.status).toBe('completed');
          const records = await store.read(session.id);

          const replay = verifyRecords(session.id, records);
          expect(replay.tree?.persisted()).toEqual(session.persistedSnapshot());
          // The running tree (xstate actors: an inspected session's) derives exactly what the interpreted tree did.
          expect(verifyRecords(session.id, records, { inspect: () => {} }).tree?.persisted()).toEqual(replay.tree?.persisted());
          expect(replay.regenerated).toBe(records.filter((record) => isDerivedType(record.type)).length);
          assertRecordsMatchSchemas(records);

          checkRights(records, mode);

          // The session's budgets hold for the whole tree (trial5 E38): every agent's turns (a model call requested)
          // and tool calls (a call a reply proposed that the budget let run; one asked again after its approval counts
          // once) add up to no more than the root's budgets, and the session's usage is exactly that sum — children
          // stopped by a join or a deadline included.
          const requests = flattenRecords(records).filter((record) => record.type === 'effect.requested').map((record) => record.data as { kind: string; args: { budget?: unknown; approval?: unknown } });
          const turns = requests.filter((request) => request.kind === 'callModel').length;
          const toolCalls = requests.filter((request) => request.kind === 'executeTool' && request.args.budget === undefined && request.args.approval === undefined).length;
          expect(turns).toBeLessThanOrEqual(6);
          expect(toolCalls).toBeLessThanOrEqual(8);
          expect({ turns: result.usage.turns, toolCalls: result.usage.toolCalls }).toEqual({ turns, toolCalls });

          const started = startedOf(records);
          const ended = new Map(flattenRecords(records).filter((record) => record.type === 'delegation.completed' || record.type === 'delegation.failed').map((record) => [(record.data as { child: string }).child, record]));
          for (const child of started) {
            // A child ends with its own record, or is stopped with an ancestor that ended before it.
            const ancestors = started.filter((other) => child.child.startsWith(`${other.child}/`)).map((other) => other.child);
            expect(ended.has(child.child) || ancestors.some((ancestor) => ended.has(ancestor)), `${child.child} never ended`).toBe(true);
            expect(replay.tree!.isActive(child.child), `${child.child} outlived the root`).toBe(false);
            expect(replay.tree!.holds(child.child), `${child.child} is still held by the actor system`).toBe(false);
          }
          // Every accepted delegation was joined, unless the agent that owned it was itself stopped first.
          const joined = new Set(flattenRecords(records).filter((record) => record.type === 'delegation.joined').map((record) => record.corr));
          for (const accepted of flattenRecords(records).filter((record) => record.type === 'delegation.accepted')) {
            const owner = accepted.actor;
            const ownerStopped = owner !== 'root' && [...ended.keys()].some((path) => owner === path || owner.startsWith(`${path}/`));
            expect(joined.has(accepted.corr) || ownerStopped, `delegation ${accepted.corr} of ${owner} was never joined`).toBe(true);
          }
          // The root's own delegation was either refused before any child started, or accepted and joined.
          const rootCall = flattenRecords(records).find((record) => record.type === 'delegation.validated' && record.actor === 'root')!;
          expect((rootCall.data as { ok: boolean }).ok).toBe(joined.has(rootCall.corr));
          if (!(rootCall.data as { ok: boolean }).ok) expect(started).toEqual([]);
          expect(session.pendingApprovals()).toEqual([]);
          replay.tree?.stop();
        } finally {
          await workspace.remove();
        }
      }),
      { numRuns: propertyRuns(30) },
    );
  });
});
