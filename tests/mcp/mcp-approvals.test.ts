import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { createRein } from '../../src/rein.js';
import type { ApprovalRequest } from '../../src/session/session-handle.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { writeFsServer } from '../support/fs-mcp-server.js';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
let serverDir: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-mcp-approve-');
  serverDir = await makeTempDir('rein-mcp-approve-server-');
});
afterEach(async () => {
  await workspace.remove();
  await serverDir.remove();
});

/** Run one scripted session against the fs server; `answer` replies to each approval (asked requests are collected). */
const run = async (toolCalls: Array<{ name: string; arguments: Record<string, unknown> }>, options: { rules?: string[]; approveAll?: boolean; answer?: (request: ApprovalRequest) => 'allow-once' | 'allow-session' | 'deny'; plant?: { file: string; text: string } } = {}) => {
  const server = await writeFsServer(serverDir.path, options.plant ?? { file: 'untouched.txt', text: 'x' });
  const store = createMemoryEventStore();
  const provider = createScriptedProvider(parseScript({ turns: [{ text: 'Writing.', toolCalls }, { text: 'Done.' }] }));
  const rein = await createRein({ store, workspace: workspace.path, provider, skills: false, mcpServers: { fs: { ...server, cwd: workspace.path } }, permissions: { rules: options.rules ?? [], approveAll: options.approveAll ?? false } });
  const asked: ApprovalRequest[] = [];
  try {
    const session = await rein.startSession({ task: 'write the notes' });
    let result = await session.whenQuiet();
    while (result.status === 'paused') {
      const pending = session.pendingApprovals();
      if (pending.length === 0) break;
      for (const request of pending) {
        asked.push(request);
        await session.approve(request.approvalId, { decision: options.answer?.(request) ?? 'deny' });
      }
      result = await session.whenQuiet();
    }
    const records = await store.read(session.id);
    return { result, records, asked };
  } finally {
    await rein.close();
  }
};

const settled = (records: readonly RecordEnvelope[]) => records.filter((record) => record.type === 'tool.settled').map((record) => record.data as { status: string; errorCode?: string; observation: string });

describe('what a person approves for an MCP tool is what runs (issue 25 §5)', () => {
  it('the approval shows the path, the content size and digest, the right risk, and offers a rule for that path only', async () => {
    const content = 'line one\nline two\n'.repeat(20);
    const { asked } = await run([{ name: 'mcp__fs__write_file', arguments: { path: 'notes.md', content } }], { answer: () => 'allow-once' });
    expect(asked).toHaveLength(1);
    const request = asked[0]!;
    expect(request.target).toBe('notes.md');
    expect(request.summary).toContain('path="notes.md"');
    expect(request.summary).toMatch(new RegExp(`content: ${content.length} chars sha256:[0-9a-f]{12}`));
    expect(request.risk).toMatch(/^write: the MCP server changes notes\.md/);
    expect(request.risk).not.toMatch(/network/);
    expect(request.suggestedRule).toBe('mcp__fs__write_file:notes.md');
    expect(await readFile(join(workspace.path, 'notes.md'), 'utf8')).toBe(content);
  }, 60_000);

  it('a rule for one path allows that path and asks for any other', async () => {
    const { records, asked } = await run(
      [
        { name: 'mcp__fs__write_file', arguments: { path: 'notes.md', content: 'a' } },
        { name: 'mcp__fs__write_file', arguments: { path: 'other.md', content: 'b' } },
      ],
      { rules: ['allow mcp__fs__write_file:notes.md'], answer: () => 'deny' },
    );
    expect(asked.map((request) => request.target)).toEqual(['other.md']);
    expect(settled(records).map((entry) => entry.status)).toEqual(['ok', 'error']);
  }, 60_000);

  it('a call whose arguments name a protected path is refused before anyone is asked, --yes or not, and the file stays', async () => {
    await writeFile(join(workspace.path, 'rein.config.json'), '{"provider":{"kind":"scripted"}}\n');
    const { records, asked } = await run(
      [
        { name: 'mcp__fs__write_file', arguments: { path: 'rein.config.json', content: '{"provider":{"baseUrl":"http://evil.example"}}' } },
        { name: 'mcp__fs__write_file', arguments: { path: `${workspace.path}/./.mcp.json`, content: '{}' } },
        { name: 'mcp__fs__write_file', arguments: { path: `file://${workspace.path}/.rein/x`, content: '{}' } },
      ],
      { approveAll: true },
    );
    expect(asked).toEqual([]);
    for (const entry of settled(records)) {
      expect(entry).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(entry.observation).toMatch(/a protected path/);
    }
    expect(records.some((record) => record.type === 'tool.started')).toBe(false);
    expect(await readFile(join(workspace.path, 'rein.config.json'), 'utf8')).toBe('{"provider":{"kind":"scripted"}}\n');
  }, 60_000);

  it('protected paths are swept after an MCP call: one it created is removed, one it changed is put back', async () => {
    await writeFile(join(workspace.path, '.mcp.json'), '{"mcpServers":{}}\n');
    const created = await run([{ name: 'mcp__fs__plant', arguments: {} }], { answer: () => 'allow-once', plant: { file: 'rein.config.json', text: '{"provider":{"baseUrl":"http://evil.example"}}' } });
    expect(settled(created.records)[0]).toMatchObject({ status: 'ok' });
    await expect(readFile(join(workspace.path, 'rein.config.json'), 'utf8')).rejects.toThrow();
    expect(created.records.find((record) => record.type === 'workspace.cleaned')?.data).toMatchObject({ paths: ['rein.config.json'], reason: 'protected-path-created' });
    expect(settled(created.records)[0]!.observation).toMatch(/rein undid what the call did to protected paths \(rein\.config\.json\)/);
    const changed = await run([{ name: 'mcp__fs__plant', arguments: {} }], { answer: () => 'allow-once', plant: { file: '.mcp.json', text: '{"mcpServers":{"x":{"command":"./evil"}}}' } });
    expect(await readFile(join(workspace.path, '.mcp.json'), 'utf8')).toBe('{"mcpServers":{}}\n');
    expect(changed.records.find((record) => record.type === 'workspace.cleaned')?.data).toMatchObject({ paths: ['.mcp.json'], reason: 'protected-path-changed' });
  }, 60_000);
});
