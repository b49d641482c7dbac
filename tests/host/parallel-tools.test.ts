import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { runScriptedSession } from 'rein/testing';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { makeTempDir } from '../support/temp-dir.js';

const intervals = new Map<string, { start: number; end: number }>();

const slowTool = (name: string, readOnly: boolean) =>
  defineTool({
    name,
    description: `sleeps, ${readOnly ? 'reading' : 'writing'}`,
    parameters: z.object({ id: z.string(), ms: z.number().int() }).strict(),
    annotations: readOnly ? readOnlyAnnotations : { ...readOnlyAnnotations, readOnly: false, destructive: true },
    risk: readOnly ? 'read' : 'write',
    sideEffect: readOnly ? 'read' : 'workspace-write',
    resumePolicy: 'rerun-after-check',
    async execute(args) {
      const start = performance.now();
      await new Promise((resolve) => setTimeout(resolve, args.ms));
      intervals.set(args.id, { start, end: performance.now() });
      return { ok: true, output: args.id };
    },
  });

const overlaps = (left: string, right: string) => {
  const a = intervals.get(left)!;
  const b = intervals.get(right)!;
  return a.start < b.end && b.start < a.end;
};

describe('parallel tool calls', () => {
  it('runs read-only calls concurrently, writes alone, and records results in request order', async () => {
    const workspace = await makeTempDir();
    try {
      const script = {
        turns: [
          {
            text: 'fan out',
            toolCalls: [
              { name: 'slow_read', arguments: { id: 'r1', ms: 80 } },
              { name: 'slow_read', arguments: { id: 'r2', ms: 10 } },
              { name: 'slow_read', arguments: { id: 'r3', ms: 40 } },
              { name: 'slow_write', arguments: { id: 'w1', ms: 20 } },
              { name: 'slow_read', arguments: { id: 'r4', ms: 5 } },
            ],
          },
          { text: 'done' },
        ],
      };
      const run = await runScriptedSession({ script, workspace: workspace.path, rein: { tools: [slowTool('slow_read', true), slowTool('slow_write', false)], parallelTools: 3, permissions: { mode: 'accept-edits' } } });
      expect(run.result.status).toBe('completed');
      expect(overlaps('r1', 'r2') && overlaps('r1', 'r3')).toBe(true);
      for (const other of ['r1', 'r2', 'r3', 'r4']) expect(overlaps('w1', other)).toBe(false);
      expect(intervals.get('w1')!.start).toBeGreaterThanOrEqual(intervals.get('r1')!.end);
      const settled = run.records.filter((record) => record.type === 'tool.settled').map((record) => (record.data as { observation: string }).observation);
      expect(settled).toEqual(['r1', 'r2', 'r3', 'w1', 'r4']);
    } finally {
      await workspace.remove();
    }
  });
});
