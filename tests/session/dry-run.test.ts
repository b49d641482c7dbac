import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runScriptedSession } from 'rein/testing';
import { dryRunSession } from '../../src/session/dry-run.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { makeTempDir } from '../support/temp-dir.js';

const greet = (schema: z.ZodType<{ name: unknown }>, counter: { calls: number }) =>
  defineTool({
    name: 'greet',
    description: 'Greet someone.',
    parameters: schema as z.ZodType<{ name: string }>,
    annotations: readOnlyAnnotations,
    risk: 'read',
    sideEffect: 'none',
    resumePolicy: 'rerun-after-check',
    execute: async ({ name }) => {
      counter.calls++;
      return { ok: true, output: `hello ${String(name)}` };
    },
  });

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => (workspace = await makeTempDir('rein-dry-')));
afterEach(() => workspace.remove());

describe('rein replay --dry-run (dryRunSession)', () => {
  it("re-validates every recorded call under today's registry and policy, executes nothing, and lists what changed", async () => {
    const then = { calls: 0 };
    const run = await runScriptedSession({
      workspace: workspace.path,
      rein: { tools: [...builtinTools(), greet(z.object({ name: z.string() }).strict(), then)] },
      script: {
        turns: [
          { text: 'a', toolCalls: [{ name: 'greet', arguments: { name: 'Al' } }, { name: 'greet', arguments: { name: 7 } }, { name: 'shout', arguments: { text: 'hi' } }] },
          { text: 'b', toolCalls: [{ name: 'write', arguments: { path: 'x.txt', content: 'x' } }] },
          { text: 'done' },
        ],
      },
    });
    expect(then.calls).toBe(1);
    const before = await run.store.read(run.session.id);
    const now = { calls: 0 };
    const { execute: _execute, prepare: _prepare, checkResume: _checkResume, ...base } = greet(z.object({ name: z.string() }), now);
    const shout = defineTool({ ...base, name: 'shout', parameters: z.object({ text: z.string() }).strict(), execute: async () => ({ ok: true as const, output: 'HI' }) });
    const registry = new ToolRegistry([...builtinTools(), greet(z.object({ name: z.string().min(3) }).strict(), now), shout]);
    const report = dryRunSession(before, { registry, decide: ({ name }) => (name === 'write' ? { decision: 'deny', reason: 'writes need approval now' } : { decision: 'allow' }) });
    expect(now.calls).toBe(0);
    expect(await run.store.read(run.session.id)).toEqual(before);
    const byArguments = (name: string) => report.calls.filter((call) => call.name === name);
    const [valid, invalid] = byArguments('greet');
    expect(valid).toMatchObject({ then: { validation: 'valid', status: 'ok' }, now: { validation: 'invalid' }, changed: true });
    expect(valid!.reasons[0]).toMatch(/^validation: valid then, invalid now/);
    expect(invalid).toMatchObject({ then: { validation: 'invalid', errorCode: 'InvalidInput' }, now: { validation: 'invalid' }, changed: false });
    expect(byArguments('shout')[0]).toMatchObject({ then: { validation: 'unknown-tool' }, now: { validation: 'valid', permission: 'allow' }, changed: true });
    expect(byArguments('write')[0]).toMatchObject({ then: { validation: 'valid' }, now: { permission: 'deny', permissionReason: 'writes need approval now' }, changed: true });
    expect(report).toMatchObject({ changed: 3, permissionEvaluated: true });
    const withoutPolicy = dryRunSession(before, { registry: new ToolRegistry([...builtinTools(), greet(z.object({ name: z.string() }).strict(), now)]) });
    expect(withoutPolicy).toMatchObject({ changed: 0, permissionEvaluated: false });
  });
});
