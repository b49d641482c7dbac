import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelProvider } from '../../src/providers/provider.js';
import { applyPatchFor, resolveProviderSettings } from '../../src/providers/provider-settings.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { rebuildContextView } from '../../src/projections/rebuild.js';
import { makeTempDir } from '../support/temp-dir.js';

/** A provider that says it is a real vendor's (it is never called here). */
const realModel = (name: string): ModelProvider => ({ ...createScriptedProvider(parseScript({ turns: [] })), name, model: 'gpt-5' });

describe('who is offered apply_patch', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-patch-offer-');
  });
  afterAll(() => workspace.remove());

  const toolsOf = async (provider: ModelProvider, applyPatch?: boolean) => {
    const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider, memory: false, ...(applyPatch === undefined ? {} : { applyPatch }) });
    const session = await rein.createSession({ task: 'x' });
    const created = (await rein.store.read(session.id))[0]!.data as { tools: string[] };
    await session.release();
    return created.tools;
  };

  it('the scripted provider always; a real model only when its settings ask; update_plan to every one', async () => {
    expect(await toolsOf(createScriptedProvider(parseScript({ turns: [] })))).toEqual(expect.arrayContaining(['apply_patch', 'update_plan']));
    const real = await toolsOf(realModel('openai'));
    expect(real).not.toContain('apply_patch');
    expect(real).toContain('update_plan');
    expect(await toolsOf(realModel('openai'), true)).toContain('apply_patch');
  });

  it('rein.config.json applyPatch: true, or model-id globs', () => {
    expect(applyPatchFor(undefined, 'gpt-5')).toBeUndefined();
    expect(applyPatchFor(true, 'anything')).toBe(true);
    expect(applyPatchFor(['gpt-5*', 'o4-mini'], 'gpt-5.1-codex')).toBe(true);
    expect(applyPatchFor(['gpt-5*', 'o4-mini'], 'o4-mini-high')).toBe(false);
    expect(applyPatchFor(['claude.*'], 'claude-x')).toBe(false);
    const settings = resolveProviderSettings({ flags: { provider: 'openai', model: 'gpt-5-mini', baseUrl: 'http://127.0.0.1:9/v1' }, env: {}, file: { applyPatch: ['gpt-5*'] }, workspace: workspace.path });
    expect(settings.applyPatch).toBe(true);
  });

  it('the context view takes the files a patch changed from its text', () => {
    const at = (seq: number, type: string, data: Record<string, unknown>) => ({ stream: 's', seq, id: `r${seq}`, type, v: 1, at: 0, actor: 'root', data });
    const input = '*** Begin Patch\n*** Update File: ./src/a.ts\n*** Move to: src/b.ts\n@@\n-x\n+y\n*** Add File: c.ts\n+c\n*** End Patch';
    const view = rebuildContextView([
      at(1, 'session.created', { sessionId: 's', task: 't', workspace: '/w', provider: { name: 'scripted' }, budgets: {}, tools: [], machine: { name: 'session', version: '1' } }),
      at(2, 'model.responded', { effectId: 'root:e1', turn: 1, text: '', toolCalls: [{ callId: 'c1', name: 'apply_patch', arguments: { input } }], stopReason: 'tool_use', usage: { inputTokens: 1, outputTokens: 1 }, elapsedMs: 1 }),
      at(3, 'tool.settled', { effectId: 'root:e2', callId: 'c1', name: 'apply_patch', status: 'ok', observation: 'applied', elapsedMs: 1 }),
    ]);
    expect(view.actors.get('root')!.modified.map((entry) => entry.path)).toEqual(['src/a.ts', 'src/b.ts', 'c.ts']);
  });
});
