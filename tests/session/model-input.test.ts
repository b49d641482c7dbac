import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../models/model-contract.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { tokenCounterFor } from '../../src/projections/token-counter.js';
import { toolsJson } from '../../src/projections/tools-json.js';
import { makeTempDir } from '../support/temp-dir.js';

/** The scripted provider under another vendor's name (the name picks the prompt's flavor), keeping every request. */
const recording = (name: string, turns: unknown[]) => {
  const inner = createScriptedProvider(parseScript({ turns }));
  const requests: ModelRequest[] = [];
  const provider: ModelProvider = {
    name,
    async *stream(request) {
      requests.push(request);
      yield* inner.stream(request);
    },
  };
  return { provider, requests };
};

const turns = [{ text: 'Reading the notes.', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] }, { text: 'The notes say to buy milk.' }];

describe('the model input', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-model-input-');
    await writeFile(join(workspace.path, 'notes.txt'), 'buy milk\n');
  });
  afterAll(async () => {
    await workspace.remove();
  });

  const run = async (name: string, options: { environment?: false; applyPatch?: boolean } = {}) => {
    const { provider, requests } = recording(name, turns);
    const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider, memory: false, applyPatch: true, clock: () => Date.UTC(2026, 10, 29), ...options });
    const session = await rein.startSession({ task: 'What do the notes say?' });
    expect((await session.whenQuiet()).status).toBe('completed');
    return requests;
  };

  it.each(['anthropic', 'openai-compatible', 'scripted'])('the fixed prefix for %s — system message (rules, environment, goal) and every built-in tool — is within 2,500 tokens', async (name) => {
    const [first] = await run(name, { applyPatch: false });
    const system = first!.messages.find((message) => message.role === 'system')!.content;
    expect(system).toContain('<environment trust="fact">');
    // The tools a session offers by default (memory tools included even with memory off: they then say it is off).
    expect(first!.tools.map((tool) => tool.name).sort()).toEqual(['bash', 'delegate_task', 'edit', 'edit_lines', 'glob', 'grep', 'list_dir', 'memory_read', 'memory_write', 'read', 'read_artifact', 'update_plan', 'write']);
    const counter = await tokenCounterFor('gpt-4o');
    // The goal (o200k; scripts/bench/prompt-cache.bench.ts prints the same figure and its breakdown). It was
    // 4,127 before the tool schemas were shown without their validation-only keywords and the descriptions tightened.
    // The temp folder's random name tokenises differently from run to run (it moved the count by a few tokens around
    // 2,500), so the count reads the system message with the workspace at one fixed path of the same kind.
    const fixedSystem = system.split(workspace.path).join('/tmp/rein-model-input-abc123');
    expect(counter.count(fixedSystem) + counter.count(toolsJson(first!.tools))).toBeLessThanOrEqual(2_500);
    // apply_patch, when a configuration offers it, adds its format description (~200).
    const [patched] = await run(name, { applyPatch: true });
    expect(counter.count(toolsJson(patched!.tools)) - counter.count(toolsJson(first!.tools))).toBeLessThanOrEqual(220);
  });

  it('the flavors differ only in their style section', async () => {
    const systems = await Promise.all(['anthropic', 'openai-compatible', 'scripted'].map(async (name) => (await run(name, { environment: false }))[0]!.messages[0]!.content));
    const [anthropic, openai, generic] = systems.map((system) => system.split('# Style')) as [string[], string[], string[]];
    expect(anthropic[0]).toBe(generic[0]);
    expect(openai[0]).toBe(generic[0]);
    expect(openai[1]).toContain('Keep going until the task is completely resolved');
    expect(anthropic[1]).not.toBe(openai[1]);
  });

  it('a representative session: the first and second inputs, in order (snapshot: a change to the model input shows in review)', async () => {
    const requests = await run('anthropic', { environment: false });
    const shown = requests.map((request) => request.messages.map((message) => ({ ...message, ...('content' in message && typeof message.content === 'string' ? { content: message.content.replaceAll(workspace.path, '<workspace>') } : {}) })));
    expect(shown[0]).toMatchSnapshot('first input');
    expect(shown[1]).toMatchSnapshot('second input');
    // Every request after the first starts with the one before it, up to its volatile turn context.
    expect(shown[1]!.slice(0, shown[0]!.length - 1)).toEqual(shown[0]!.slice(0, -1));
    expect(requests[1]!.cacheBreakpoints).toEqual(expect.arrayContaining([0]));
  });
});
