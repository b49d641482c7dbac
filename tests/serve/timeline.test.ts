import { writeFile } from 'node:fs/promises';
import { join as joinPath } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from 'rein/testing';
import { createRein } from '../../src/rein.js';
import { rebuildTraceView } from '../../src/projections/rebuild.js';
import { timelineOf } from '../../src/serve/timeline.js';
import { actorProvider, delegate, submit, validReport } from '../support/delegation-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('a session’s timeline', () => {
  it('gives each child agent its own lane from its start to its end, and the join back in the parent’s', async () => {
    const workspace = await makeTempDir();
    try {
      await writeFile(joinPath(workspace.path, 'a.txt'), 'alpha\n');
      const store = createMemoryEventStore();
      const explorer = (id: string) => ({ id, role: 'explorer', objective: `look at a.txt (${id})` });
      const rein = await createRein({
        store,
        workspace: workspace.path,
        provider: actorProvider({ root: [delegate([explorer('x'), explorer('y')]), { text: 'Done.' }], x: [{ text: 'reading', calls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, submit(validReport('finding-report', 'completed'))], y: [submit(validReport('finding-report', 'completed'))] }),
        sandbox: { loginShell: false },
        memory: false,
      });
      const session = await rein.startSession({ task: 'delegate' });
      expect((await session.whenQuiet()).status).toBe('completed');
      const { steps, lanes, stable } = timelineOf(rebuildTraceView(await store.read(session.id)));
      expect(lanes[0]).toBe('root');
      const children = steps.filter((step) => step.kind === 'child');
      expect(children.map((step) => step.status)).toEqual(['ok', 'ok']);
      for (const child of children) {
        expect(lanes).toContain(child.actor);
        // The child's own turns and calls sit in its lane, inside the span of its child row.
        const own = steps.filter((step) => step.actor === child.actor && step.kind !== 'child');
        expect(own.length).toBeGreaterThan(0);
        for (const step of own) {
          expect(step.seq).toBeGreaterThanOrEqual(child.seq);
          expect(step.to).toBeLessThanOrEqual(child.to);
        }
        // Its row comes before its own rows.
        expect(steps.indexOf(child)).toBeLessThan(steps.indexOf(own[0]!));
      }
      const join = steps.find((step) => step.kind === 'join')!;
      expect(join).toMatchObject({ actor: 'root', status: 'ok' });
      expect(join.seq).toBeGreaterThan(Math.max(...children.map((child) => child.seq)));
      expect(steps.map((step) => step.seq)).toEqual([...steps.map((step) => step.seq)].sort((left, right) => left - right));
      expect(stable).toBe(steps.length);
      expect(steps.at(-1)).toMatchObject({ kind: 'end', status: 'ok' });
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
