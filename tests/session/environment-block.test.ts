import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContextProjected } from '../../models/context.records.js';
import type { EnvironmentCaptured } from '../../models/instructions.records.js';
import type { ModelRequest } from '../../models/model-contract.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { contextAtTurn } from '../../src/session/context-at-turn.js';
import { replaySession } from '../../src/session/replay-session.js';
import { flattenRecords } from '../../src/host/step-record.js';
import { renderEnvironment } from '../../src/session/environment-block.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { makeTempDir } from '../support/temp-dir.js';

const recording = (turns: unknown[]) => {
  const inner = createScriptedProvider(parseScript({ turns }));
  const requests: ModelRequest[] = [];
  const provider: ModelProvider = {
    name: inner.name,
    async *stream(request) {
      requests.push(request);
      yield* inner.stream(request);
    },
  };
  return { provider, requests };
};

const systemOf = (request: ModelRequest): string => request.messages.find((message) => message.role === 'system')?.content ?? '';

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' } });

describe('the environment block', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-environment-');
    await mkdir(join(workspace.path, 'src'));
    await writeFile(join(workspace.path, 'src', 'a.ts'), 'export const a = 1;\n');
    await writeFile(join(workspace.path, 'package.json'), '{}\n');
    git(workspace.path, 'init', '-q', '-b', 'trunk');
    git(workspace.path, 'add', '.');
    git(workspace.path, 'commit', '-q', '-m', 'First commit: the package');
    git(workspace.path, 'commit', '-q', '--allow-empty', '-m', 'Second commit: nothing yet');
  });
  afterEach(async () => {
    await workspace.remove();
  });

  it('is captured once, recorded by digest with its text in a blob, shown in the stable system message, and the same after a fork resumes in a changed workspace', async () => {
    const store = createMemoryEventStore();
    const { provider, requests } = recording([{ text: 'looking', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'done' }]);
    const day = Date.UTC(2026, 10, 29, 9, 30);
    const rein = await createRein({ store, workspace: workspace.path, provider, memory: false, clock: () => day });
    const session = await rein.startSession({ task: 'look around' });
    expect((await session.whenQuiet()).status).toBe('completed');

    const records = await store.read(session.id);
    const captured = records.filter((record) => record.type === 'environment.captured');
    expect(captured).toHaveLength(1);
    const data = captured[0]!.data as EnvironmentCaptured;
    expect(data.git).toBe(true);
    const text = Buffer.from(await store.readBlob(session.id, data.text)).toString('utf8');
    expect(text).toContain(`Workspace: ${workspace.path}`);
    expect(text).toContain("Today's date: 2026-11-29 (UTC)");
    expect(text).toContain('Git: branch trunk, clean');
    expect(text.indexOf('- Second commit: nothing yet')).toBeLessThan(text.indexOf('- First commit: the package'));
    expect(text).toMatch(/Top-level entries \(2\): package\.json src\//);
    expect(text).toMatch(/Sandbox: /);
    expect(text).toMatch(/Network: off for commands/);

    // Both calls show it in the system message, byte for byte the same.
    expect(requests).toHaveLength(2);
    for (const request of requests) expect(systemOf(request)).toContain(`<environment trust="fact">\n${text}\n</environment>`);
    expect(systemOf(requests[0]!)).toBe(systemOf(requests[1]!));

    // The ledger names it with its blob; `rein context` shows the exact input the model got.
    // (context.projected is folded into the step record, v2: its lists are rebuilt from the log, environment included.)
    expect(flattenRecords(records).filter((record) => record.type === 'context.projected').map((record) => record.data as ContextProjected)).toHaveLength(2);
    const shown = await contextAtTurn(store, records, { registry: new ToolRegistry(builtinTools()), turn: 1 });
    expect(shown.ledger.included?.find((entry) => entry.source === 'environment')).toMatchObject({ refs: [data.text], trust: 'fact' });
    expect(shown.rebuilt).toEqual({ matches: true });
    expect(JSON.stringify(shown.input.messages)).toContain(JSON.stringify(text).slice(1, -1));
    await expect(replaySession(store, session.id)).resolves.toMatchObject({ verified: records.length });

    // A fork taken after the first call resumes in a workspace that changed, another day: the model sees the block
    // the log recorded, and nothing new is captured.
    const responded = records.find((record) => record.type === 'model.responded')!.seq;
    // (The step ends with its step record; the next step's facts come before its input.)
    const at = records.find((record) => record.seq > responded && record.type === 'step.derived')!.seq;
    await writeFile(join(workspace.path, 'new-file.txt'), 'x\n');
    const later = recording([{ text: 'done after the fork' }]);
    const again = await createRein({ store, workspace: workspace.path, provider: later.provider, memory: false, clock: () => day + 3 * 86_400_000 });
    const forkId = await again.forkSession(session.id, at);
    const { session: forked } = await again.resumeSession(forkId);
    await forked.whenQuiet();
    expect(later.requests.length).toBeGreaterThan(0);
    expect(systemOf(later.requests[0]!)).toBe(systemOf(requests[0]!));
    expect((await store.read(forkId)).filter((record) => record.type === 'environment.captured')).toHaveLength(1);
  });

  it('says when the workspace is not a repository, caps the listing, and is left out with environment: false', async () => {
    const plain = await makeTempDir('rein-environment-plain-');
    try {
      for (let index = 0; index < 45; index++) await writeFile(join(plain.path, `file-${String(index).padStart(2, '0')}.txt`), '');
      const store = createMemoryEventStore();
      const { provider, requests } = recording([{ text: 'done' }]);
      const rein = await createRein({ store, workspace: plain.path, provider, memory: false, environment: { maxEntries: 10 } });
      await (await rein.startSession({ task: 'x' })).whenQuiet();
      const system = systemOf(requests[0]!);
      expect(system).toContain('Git: not a git repository');
      expect(system).toContain('Top-level entries (45, first 10 shown): file-00.txt');
      expect(system).toContain('… and 35 more');

      const off = recording([{ text: 'done' }]);
      const without = await createRein({ store, workspace: plain.path, provider: off.provider, memory: false, environment: false });
      const session = await without.startSession({ task: 'x' });
      await session.whenQuiet();
      expect(systemOf(off.requests[0]!)).not.toContain('<environment trust=');
      expect((await store.read(session.id)).some((record) => record.type === 'environment.captured')).toBe(false);
    } finally {
      await plain.remove();
    }
  });

  it('renders the same facts to the same text (no clock time, no counter)', () => {
    const facts = { workspace: '/w', now: Date.UTC(2026, 0, 2, 23, 59), os: 'Linux 6 (linux/x64)', shell: 'bash', sandbox: 'auto', network: 'off for commands', entries: ['a/', 'b'], total: 2 };
    expect(renderEnvironment(facts)).toBe(renderEnvironment({ ...facts }));
    expect(renderEnvironment(facts)).toContain("Today's date: 2026-01-02 (UTC)");
    expect(renderEnvironment(facts)).not.toMatch(/23:59/);
  });
});
