import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import { createMemoryEventStore } from '../../stores/index.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { makeTempDir } from '../support/temp-dir.js';

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

/** The real server-everything from npm, over Streamable HTTP, as its own process (killed like any server process). */
const startEverything = async (): Promise<{ url: string; child: ChildProcess }> => {
  const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const port = await freePort();
  const child = spawn(process.execPath, [entry, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => /listening|running|port/i.test(chunk.toString()) && resolve();
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
};

describe('an HTTP MCP server that goes away in the middle of a call', () => {
  it('settles the call Unavailable soon, not a Timeout after the whole call timeout (trial 5 E14)', async () => {
    const workspace = await makeTempDir('rein-mcp-drop-');
    const server = await startEverything();
    const provider: ModelProvider = {
      name: 'drop',
      model: 'drop',
      async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
        yield { type: 'started', model: 'drop' };
        if (request.turn === 1) {
          yield { type: 'tool-intent', providerCallId: 'p1', name: 'mcp__ev__trigger-long-running-operation', arguments: { duration: 30, steps: 10 } };
          yield { type: 'finished', stopReason: 'tool_use' };
          return;
        }
        yield { type: 'text-delta', text: 'Done.' };
        yield { type: 'finished', stopReason: 'end_turn' };
      },
    };
    try {
      const store = createMemoryEventStore();
      const rein = await createRein({ store, workspace: workspace.path, provider, skills: false, permissions: { approveAll: true }, mcpServers: { ev: { type: 'http', url: server.url, timeout: 60_000 } } });
      const session = await rein.createSession({ task: 'call the long operation' });
      // Once the call reports progress, the server process is killed.
      session.live$.subscribe((event) => {
        if (event.type === 'effect.progress' && server.child.exitCode === null) server.child.kill('SIGKILL');
      });
      const started = Date.now();
      await session.send('go');
      await session.whenQuiet();
      const settled = (await store.read(session.id)).find((record) => record.type === 'tool.settled')?.data as { status: string; errorCode?: string };
      expect(settled).toMatchObject({ status: 'error', errorCode: 'Unavailable' });
      expect(Date.now() - started).toBeLessThan(25_000);
      await rein.close();
    } finally {
      server.child.kill('SIGKILL');
      await workspace.remove();
    }
  }, 120_000);
});
