import { PermissionPolicy } from '../../src/policy/permission-policy.js';
import { defaultSandboxPolicy } from '../../src/policy/sandbox-policy.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContextProjected } from '../../models/context.records.js';
import { defaultBudgets } from '../../models/budgets.js';
import { createMemoryEventStore, runScriptedSession } from 'rein/testing';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { wireSession, type SessionServices } from '../../src/session/session-services.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { Workspace } from '../../src/tools/workspace.js';
import { loadBlake3 } from '../../src/util/blake3.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-wiring-');
  await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
});
afterEach(() => workspace.remove());

const script = { turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Done.' }] };

describe('the context policy wired into the model call', () => {
  it('every model call records context.projected (cause = its request) whose input blob is exactly what the provider got', async () => {
    const seen: unknown[] = [];
    const provider = createScriptedProvider(parseScript(script));
    const recording = { ...provider, stream: (request: Parameters<typeof provider.stream>[0]) => (seen.push(JSON.parse(JSON.stringify({ messages: request.messages, tools: request.tools }))), provider.stream(request)) };
    const store = createMemoryEventStore();
    const { createRein } = await import('../../src/rein.js');
    const rein = await createRein({ store, workspace: workspace.path, provider: recording });
    const session = await rein.startSession({ task: 'Read a.txt' });
    await session.whenQuiet();
    const records = await store.read(session.id);
    const requests = records.filter((record) => record.type === 'effect.requested' && (record.data as { kind: string }).kind === 'callModel');
    const projected = records.filter((record) => record.type === 'context.projected');
    expect(projected.map((record) => record.cause)).toEqual(requests.map((record) => record.id));
    for (const [index, record] of projected.entries()) {
      const data = ContextProjected.parse(record.data);
      const input = JSON.parse(Buffer.from(await store.readBlob(record.stream, data.input)).toString());
      expect(input).toEqual(seen[index]);
      const reply = records.find((candidate) => candidate.type === 'model.responded' && candidate.cause === record.cause)!;
      expect(records[record.seq]).toMatchObject({ type: 'model.attempted', cause: record.cause });
      expect(reply.seq).toBe(record.seq + 2);
    }
  });

  it('compact() shrinks the next projection, is recorded, survives a rebuild of the views, and stops at the maximum level', async () => {
    await loadBlake3();
    const run = await runScriptedSession({ script, workspace: workspace.path });
    const services: SessionServices = {
      store: run.store,
      provider: createScriptedProvider(parseScript(script)),
      registry: new ToolRegistry(builtinTools()),
      workspace: await Workspace.open(workspace.path),
      budgets: defaultBudgets,
      prices: {},
      clock: () => 1,
      systemPrompt: 'Rules.',
      modelOptions: {},
      retry: {},
      random: () => 0.5,
      snapshotEvery: 0,
      parallelTools: 4,
      permissions: new PermissionPolicy(),
      sandbox: defaultSandboxPolicy,
    };
    const wiring = wireSession(services, ['read']);
    for (const record of run.records) wiring.observe(record);
    const attempt = { actor: 'root', turn: 3, effectId: 'root:e9', attempt: 1 };
    const before = ContextProjected.parse((await wiring.source.prepare!(attempt)).facts[0]!.data);
    expect(await wiring.source.compact!('root', new AbortController().signal)).toBe(true);
    const after = ContextProjected.parse((await wiring.source.prepare!({ ...attempt, attempt: 2 })).facts[0]!.data);
    expect(after.compactionLevel).toBe(before.compactionLevel + 1);
    expect(after.budget.total).toBe(Math.floor(before.budget.total / 2));
    const rebuilt = wireSession(services, ['read']);
    for (const record of [...run.records, { ...run.records[0]!, seq: run.records.length + 1, id: 'cp', type: 'context.projected', data: after }]) rebuilt.observe(record);
    expect(ContextProjected.parse((await rebuilt.source.prepare!(attempt)).facts[0]!.data).compactionLevel).toBe(1);
    let compacted = 0;
    while (await wiring.source.compact!('root', new AbortController().signal)) compacted++;
    expect(compacted).toBe(3);
  });
});
