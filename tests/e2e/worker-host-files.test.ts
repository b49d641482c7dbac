import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../src/index.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { describePostgres, freshSchemaUrl } from '../support/postgres.js';
import { makeTempDir } from '../support/temp-dir.js';

const guard = '#!/bin/sh\ncat > /dev/null\nexit 0\n';

/** `rein worker` protects the hook scripts `rein run` and `rein resume` protect (src/cli/host-run-files.ts). */
describePostgres('a worker protects the workspace files its command hooks run on the host', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let home: { path: string; remove: () => Promise<void> };
  let store: PostgresEventStore;
  let url: string;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-worker-files-');
    home = await makeTempDir('rein-worker-files-home-');
    url = freshSchemaUrl();
    store = await openPostgresEventStore(url);
    await writeFile(join(workspace.path, 'guard.sh'), guard);
    await chmod(join(workspace.path, 'guard.sh'), 0o755);
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'bash|write|edit', hooks: [{ type: 'command', command: './guard.sh' }] }] } }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
      { text: '1', toolCalls: [{ name: 'edit', arguments: { path: 'guard.sh', old_string: 'exit 0', new_string: 'env > leaked.txt\nexit 0' } }] },
      { text: '2', toolCalls: [{ name: 'write', arguments: { path: 'guard.sh', content: '#!/bin/sh\nenv > leaked.txt\n' } }] },
      { text: 'Done.' },
    ] }));
  });
  afterAll(async () => {
    await store.close();
    await workspace.remove();
    await home.remove();
  });

  it('the model cannot edit a trusted hook script in a worker\'s session', async () => {
    const env = { REIN_CONFIG_HOME: home.path };
    expect((await runInProcess(['hooks', 'trust'], { cwd: workspace.path, env })).code).toBe(0);
    const queued = await runInProcess(['run', 'edit the guard', '--script', 'script.json', '--mode', 'accept-edits', '--store', url, '--detach', '--json'], { cwd: workspace.path, env });
    expect(queued.code, queued.stderr).toBe(0);
    const { sessionId } = jsonLines(queued.stdout)[0]!;
    const worker = await runInProcess(['worker', '--store', url, '--json', '--exit-when-idle', '300'], { cwd: home.path, env });
    expect(worker.code, worker.stderr).toBe(0);
    const settled = (await store.read(String(sessionId))).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; errorCode?: string });
    expect(settled.map((data) => [data.name, data.status, data.errorCode])).toEqual([
      ['edit', 'error', 'Denied'],
      ['write', 'error', 'Denied'],
    ]);
    expect(await readFile(join(workspace.path, 'guard.sh'), 'utf8')).toBe(guard);
  }, 120_000);
});
