import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../models/model-contract.js';
import type { InstructionsLoaded } from '../../models/instructions.records.js';
import type { ContextProjected } from '../../models/context.records.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { replaySession } from '../../src/session/replay-session.js';
import { contextAtTurn } from '../../src/session/context-at-turn.js';
import { flattenRecords } from '../../src/host/step-record.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { makeTempDir } from '../support/temp-dir.js';
import { ProjectInstructions } from '../../src/session/project-instructions.js';
import { estimateTokenCounter } from '../../src/projections/token-counter.js';

/** The scripted provider, keeping every request and running `before(call)` as each call starts. */
const recording = (turns: unknown[], before: (call: number) => Promise<void> = async () => {}) => {
  const inner = createScriptedProvider(parseScript({ turns }));
  const requests: ModelRequest[] = [];
  const provider: ModelProvider = {
    name: inner.name,
    async *stream(request) {
      requests.push(request);
      await before(requests.length);
      yield* inner.stream(request);
    },
  };
  return { provider, requests };
};

const systemOf = (request: ModelRequest): string => request.messages.find((message) => message.role === 'system')?.content ?? '';

describe('project instructions (AGENTS.md, CLAUDE.md, the user file)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let configHome: { path: string; remove: () => Promise<void> };
  const previous = process.env.REIN_CONFIG_HOME;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-instructions-');
    configHome = await makeTempDir('rein-config-home-');
    process.env.REIN_CONFIG_HOME = configHome.path;
    await writeFile(join(workspace.path, 'AGENTS.md'), '# Project\nUse tabs.\n');
    await mkdir(join(workspace.path, 'pkg', 'deep'), { recursive: true });
    await writeFile(join(workspace.path, 'pkg', 'CLAUDE.md'), 'pkg: prefer small functions\n');
    await writeFile(join(workspace.path, 'pkg', 'deep', 'AGENTS.md'), 'deep: use spaces here\n');
    await writeFile(join(workspace.path, 'pkg', 'deep', 'CLAUDE.md'), 'deep claude: never shown (AGENTS.md wins)\n');
    await writeFile(join(workspace.path, 'pkg', 'deep', 'code.txt'), 'x\n');
    await writeFile(join(configHome.path, 'AGENTS.md'), 'user: answer briefly\n');
  });
  afterEach(async () => {
    if (previous === undefined) delete process.env.REIN_CONFIG_HOME;
    else process.env.REIN_CONFIG_HOME = previous;
    await workspace.remove();
    await configHome.remove();
  });

  it('loads the user file and the root file first, the files on the way to what the agent reads next, and records each change by digest', async () => {
    const store = createMemoryEventStore();
    const turns = [
      { text: 'reading', toolCalls: [{ name: 'read', arguments: { path: 'pkg/deep/code.txt' } }] },
      { text: 'again', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
      { text: 'done' },
    ];
    // Before the third call the user edits the root file: the change is seen and recorded.
    const { provider, requests } = recording(turns, async (call) => {
      if (call === 2) await writeFile(join(workspace.path, 'AGENTS.md'), '# Project\nUse tabs. Run npm test.\n');
    });
    const rein = await createRein({ store, workspace: workspace.path, provider, memory: false });
    const session = await rein.startSession({ task: 'look' });
    expect((await session.whenQuiet()).status).toBe('completed');

    const first = systemOf(requests[0]!);
    expect(first).toContain('<project-instructions trust="trusted">');
    expect(first.indexOf('user: answer briefly')).toBeLessThan(first.indexOf('Use tabs.'));
    expect(first).not.toContain('pkg: prefer small functions');
    const second = systemOf(requests[1]!);
    // General to specific: root, pkg (CLAUDE.md: it has no AGENTS.md), pkg/deep (AGENTS.md wins over its CLAUDE.md).
    expect(second.indexOf('Use tabs.')).toBeLessThan(second.indexOf('pkg: prefer small functions'));
    expect(second.indexOf('pkg: prefer small functions')).toBeLessThan(second.indexOf('deep: use spaces here'));
    expect(second).not.toContain('never shown');
    expect(systemOf(requests[2]!)).toContain('Run npm test.');

    const records = await store.read(session.id);
    const loaded = records.filter((record) => record.type === 'instructions.loaded').map((record) => record.data as InstructionsLoaded);
    expect(loaded.map((entry) => entry.files.map((file) => file.path))).toEqual([
      [join(configHome.path, 'AGENTS.md'), 'AGENTS.md'],
      [join(configHome.path, 'AGENTS.md'), 'AGENTS.md', 'pkg/CLAUDE.md', 'pkg/deep/AGENTS.md'],
      [join(configHome.path, 'AGENTS.md'), 'AGENTS.md', 'pkg/CLAUDE.md', 'pkg/deep/AGENTS.md'],
    ]);
    expect(loaded[0]!.changed).toBeUndefined();
    expect(loaded[1]!.changed).toEqual({ added: ['pkg/CLAUDE.md', 'pkg/deep/AGENTS.md'], changed: [], removed: [] });
    expect(loaded[2]!.changed).toEqual({ added: [], changed: ['AGENTS.md'], removed: [] });
    // The recorded text is exactly what the model saw.
    expect(new TextDecoder().decode(await store.readBlob(session.id, loaded[2]!.text))).toBe(systemOf(requests[2]!).split('<project-instructions trust="trusted">\n')[1]!.split('\n</project-instructions>')[0]);

    // The context ledger counts them as their own part, and rein context shows it.
    // context.projected records the ledger's sizes; its lists are rebuilt from the log, the instructions from their blob.
    const projected = flattenRecords(records).filter((record) => record.type === 'context.projected').map((record) => record.data as ContextProjected);
    const shown = await contextAtTurn(store, records, { registry: new ToolRegistry(builtinTools()), turn: 3 });
    expect(shown.rebuilt).toEqual({ matches: true });
    const part = (shown.ledger.included ?? []).find((entry) => entry.source === 'project_instructions');
    expect(part).toMatchObject({ mode: 'full', trust: 'trusted', refs: [loaded[2]!.text] });
    expect(part!.tokens).toBeGreaterThan(0);
    expect(projected[2]!.budget.bySource.project_instructions).toBe(part!.tokens);
    await expect(replaySession(store, session.id)).resolves.toMatchObject({ verified: records.length });
  });

  it('sees every change on the next refresh, and records nothing while no file moved (a CLAUDE.md beside a loaded AGENTS.md is not even looked at)', async () => {
    const instructions = new ProjectInstructions(workspace.path);
    const paths = async () => {
      const { facts } = await instructions.refresh(estimateTokenCounter);
      return facts.map((fact) => (fact.data as InstructionsLoaded).files.map((file) => file.path));
    };
    const user = join(configHome.path, 'AGENTS.md');
    expect(await paths()).toEqual([[user, 'AGENTS.md']]);
    expect(await paths()).toEqual([]);
    instructions.noteFile('pkg/deep/code.txt');
    expect(await paths()).toEqual([[user, 'AGENTS.md', 'pkg/CLAUDE.md', 'pkg/deep/AGENTS.md']]);
    expect(await paths()).toEqual([]);
    // A CLAUDE.md written beside a loaded AGENTS.md changes nothing the model sees: nothing is recorded.
    await writeFile(join(workspace.path, 'pkg', 'deep', 'CLAUDE.md'), 'deep claude: changed, still never shown\n');
    await writeFile(join(workspace.path, 'CLAUDE.md'), 'root claude: never shown\n');
    expect(await paths()).toEqual([]);
    // The AGENTS.md goes: its folder's CLAUDE.md is read on the very next refresh.
    await rm(join(workspace.path, 'pkg', 'deep', 'AGENTS.md'));
    expect(await paths()).toEqual([[user, 'AGENTS.md', 'pkg/CLAUDE.md', 'pkg/deep/CLAUDE.md']]);
    expect(instructions.now?.text).toContain('deep claude: changed, still never shown');
    // A changed file (another size) is seen on the next refresh too.
    await writeFile(join(workspace.path, 'AGENTS.md'), '# Project\nUse tabs, always.\n');
    const [changed] = (await instructions.refresh(estimateTokenCounter)).facts;
    expect((changed!.data as InstructionsLoaded).changed).toEqual({ added: [], changed: ['AGENTS.md'], removed: [] });
    expect(instructions.now?.text).toContain('Use tabs, always.');
    await rm(user);
    expect(await paths()).toEqual([['AGENTS.md', 'pkg/CLAUDE.md', 'pkg/deep/CLAUDE.md']]);
    expect(await paths()).toEqual([]);
  });

  it('cuts a file over its share of the budget with a note that names it, never silently', async () => {
    await writeFile(join(workspace.path, 'AGENTS.md'), Array.from({ length: 400 }, (_, index) => `rule ${index}: keep it tidy and test it well`).join('\n'));
    const { provider, requests } = recording([{ text: 'ok' }]);
    const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider, memory: false, instructions: { maxTokens: 300, user: false } });
    const session = await rein.startSession({ task: 'look' });
    await session.whenQuiet();
    const system = systemOf(requests[0]!);
    expect(system).toContain('rule 0: keep it tidy');
    expect(system).not.toContain('rule 399');
    expect(system).toMatch(/\[cut by rein: AGENTS\.md is \d+ bytes; the first \d+ characters are shown, to fit the 300-token budget/);
    const loaded = (await rein.store.read(session.id)).find((record) => record.type === 'instructions.loaded')?.data as InstructionsLoaded;
    expect(loaded.files).toEqual([expect.objectContaining({ path: 'AGENTS.md', scope: 'project', cut: true })]);
    expect(loaded.tokens).toBeLessThanOrEqual(300);
  });

  it('protects them: file tools read them but write none, in any folder', async () => {
    const turns = [
      { text: 'trying', toolCalls: [{ name: 'read', arguments: { path: 'AGENTS.md' } }, { name: 'write', arguments: { path: 'AGENTS.md', content: 'obey me' } }, { name: 'write', arguments: { path: 'pkg/AGENTS.md', content: 'obey me' } }, { name: 'edit', arguments: { path: 'pkg/CLAUDE.md', old_string: 'pkg', new_string: 'x' } }] },
      { text: 'done' },
    ];
    const { provider } = recording(turns);
    const store = createMemoryEventStore();
    const rein = await createRein({ store, workspace: workspace.path, provider, memory: false, permissions: { approveAll: true } });
    const session = await rein.startSession({ task: 'try' });
    await session.whenQuiet();
    const settled = (await store.read(session.id)).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; errorCode?: string });
    expect(settled.map((entry) => `${entry.name} ${entry.errorCode ?? entry.status}`)).toEqual(['read ok', 'write Denied', 'write Denied', 'edit Denied']);
    expect(await readFile(join(workspace.path, 'AGENTS.md'), 'utf8')).toBe('# Project\nUse tabs.\n');
  });
});
