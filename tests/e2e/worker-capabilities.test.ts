import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../src/index.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { everythingServer } from '../support/mcp-servers.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { makeTempDir } from '../support/temp-dir.js';

/* Issue 30 E: a worker runs a queued session with the workspace's MCP servers and skills, as `rein run` there would. */
describePostgres('a worker gives a queued session the workspace\'s MCP servers and skills', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let home: { path: string; remove: () => Promise<void> };
  let store: PostgresEventStore;
  let url: string;
  beforeAll(async () => {
    workspace = await makeTempDir('rein-worker-caps-');
    home = await makeTempDir('rein-worker-caps-home-');
    url = freshSchemaUrl();
    store = await openPostgresEventStore(url);
    await writeFile(join(workspace.path, '.mcp.json'), JSON.stringify({ mcpServers: { everything: everythingServer() } }));
    await mkdir(join(workspace.path, '.agents', 'skills', 'greet'), { recursive: true });
    await writeFile(join(workspace.path, '.agents', 'skills', 'greet', 'SKILL.md'), '---\nname: greet\ndescription: how this project greets people\n---\nSay hello.\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'echo', toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'hi' } }] }, { text: 'done' }] }));
  });
  afterAll(async () => {
    await store.close();
    await workspace.remove();
    await home.remove();
  });

  it('the trusted .mcp.json server starts for the queued session and its call runs; the skill is in its catalog', async () => {
    const env = { REIN_CONFIG_HOME: home.path, HOME: home.path };
    // --yes at submission records the trust of .mcp.json for this user, as it does for plugins.
    const queued = await runInProcess(['run', 'echo hi', '--script', 'script.json', '--store', url, '--detach', '--json', '--yes'], { cwd: workspace.path, env });
    expect(queued.code, queued.stderr).toBe(0);
    const sessionId = String(jsonLines(queued.stdout)[0]!.sessionId);
    const worker = await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: home.path, env });
    expect(jsonLines(worker.stdout).filter((event) => event.sessionId === sessionId).map((event) => event.type)).toEqual(['claimed', 'finished']);
    const records = await store.read(sessionId);
    expect(records.some((record) => record.type === 'mcp.connected' && (record.data as { server: string }).server === 'everything')).toBe(true);
    const settled = records.find((record) => record.type === 'tool.settled')!.data as { name: string; status: string; observation: string };
    expect(settled).toMatchObject({ name: 'mcp__everything__echo', status: 'ok' });
    expect(settled.observation).toContain('hi');
    expect(JSON.stringify(records.filter((record) => record.type === 'capability.catalog').map((record) => record.data))).toContain('greet');
  });
});
