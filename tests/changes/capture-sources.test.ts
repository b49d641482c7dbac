import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { WorkspaceChanged } from '../../models/workspace.records.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { actorProvider, delegate, submit, validReport } from '../support/delegation-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';

/** An MCP server (the official SDK) whose one tool writes a note into the workspace, as a real server may. */
const notesServer = (root: string): McpServer => {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('save_note', { description: 'Save a note', inputSchema: z.object({ name: z.string(), text: z.string() }) }, async ({ name, text }) => {
    await mkdir(join(root, 'notes'), { recursive: true });
    await writeFile(join(root, 'notes', `${name}.md`), text);
    return { content: [{ type: 'text', text: 'saved' }] };
  });
  return server;
};

describe('the capture attributes each change to whatever call made it', () => {
  it('an MCP tool, a hook that runs inside a call, and a child agent’s call each record their own changes', async () => {
    const workspace = await makeTempDir('rein-capture-sources-');
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
      const store = createMemoryEventStore();
      const provider = actorProvider({
        root: [
          { text: 'noting', calls: [{ name: 'mcp__notes__save_note', arguments: { name: 'n1', text: 'hello' } }] },
          { text: 'writing', calls: [{ name: 'write', arguments: { path: 'w.txt', content: 'by the root\n' } }] },
          delegate([{ id: 'kid', role: 'worker', objective: 'write k.txt' }]),
          { text: 'Done.' },
        ],
        kid: [{ text: 'writing', calls: [{ name: 'write', arguments: { path: 'k.txt', content: 'by the child\n' } }] }, submit(validReport('patch-proposal', 'completed'))],
      });
      const rein = await createRein({
        store,
        workspace: workspace.path,
        provider,
        memory: false,
        skills: false,
        permissions: { approveAll: true },
        sandbox: { loginShell: false },
        // The hook runs inside the root's write call: its file is that call's change.
        hooks: { PostToolUse: [{ matcher: '^write$', hooks: [{ type: 'command', command: 'echo "$(date +%N)" > hook.txt' }] }] },
        mcpServers: { notes: { type: 'in-memory', connect: (transport) => notesServer(workspace.path).connect(transport as never) } },
      });
      const session = await rein.startSession({ task: 'change things' });
      expect((await session.whenQuiet()).status).toBe('completed');
      await session.release();
      const records = await store.read(session.id);
      const changed = records.filter((record) => record.type === 'workspace.changed').map((record) => ({ actor: record.actor, ...(record.data as WorkspaceChanged) }));
      expect(changed.map((change) => [change.source, change.actor, change.tool, change.changes.map((entry) => entry.path)])).toEqual([
        ['call', 'root', 'mcp__notes__save_note', ['notes', 'notes/n1.md']],
        ['call', 'root', 'write', ['hook.txt', 'w.txt']],
        ['call', expect.stringMatching(/^root\/delegation-\d+\/kid$/), 'write', ['hook.txt', 'k.txt']],
      ]);
      // No change is left to anyone else, and the trees chain: each record's tree is the next one's starting point.
      const diff = await rein.diff(session.id, { net: true });
      expect(diff.net?.map((change) => change.path)).toEqual(['hook.txt', 'k.txt', 'notes', 'notes/n1.md', 'w.txt']);
      await expect(rein.replaySession(session.id)).resolves.toMatchObject({ verified: records.length });
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
