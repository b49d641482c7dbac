import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrustStore, trustFilePath } from '../../src/trust/trust-store.js';
import { loadProjectMcp, mcpServersDigest } from '../../src/mcp/project-mcp.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('the trust store', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(() => dir.remove());

  it('lives in the user\'s configuration directory, never in a workspace', () => {
    expect(trustFilePath({ REIN_CONFIG_HOME: '/x' })).toBe('/x/trust.json');
    expect(trustFilePath({ XDG_CONFIG_HOME: '/cfg' })).toBe('/cfg/rein/trust.json');
  });

  it('trusts a file for exactly the content it was shown: a change asks again; revoke forgets', async () => {
    const store = new TrustStore(join(dir.path, 'config', 'trust.json'));
    const subject = { kind: 'mcp', path: '/w/.mcp.json', digest: 'sha256:a' };
    expect(await store.status(subject)).toBe('untrusted');
    await store.trust(subject);
    expect(await store.status(subject)).toBe('trusted');
    expect(await store.status({ ...subject, digest: 'sha256:b' })).toBe('changed');
    expect(await store.status({ ...subject, kind: 'plugin' })).toBe('untrusted');
    await store.trust({ ...subject, digest: 'sha256:b' });
    expect(JSON.parse(await readFile(store.location, 'utf8')).entries).toHaveLength(1);
    expect(await store.revoke(subject)).toBe(true);
    expect(await store.status({ ...subject, digest: 'sha256:b' })).toBe('untrusted');
  });

  it('a broken trust file is CONFIG_INVALID, not silently empty', async () => {
    const file = join(dir.path, 'trust.json');
    await writeFile(file, '{ nope');
    await expect(new TrustStore(file).status({ kind: 'mcp', path: '/x', digest: 'd' })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('binds a project file\'s trust to its mcpServers, whatever else the file holds', async () => {
    const store = new TrustStore(join(dir.path, 'trust.json'));
    const servers = { a: { command: 'x' } };
    await writeFile(join(dir.path, 'rein.config.json'), JSON.stringify({ provider: 'scripted', mcpServers: servers }));
    await writeFile(join(dir.path, '.mcp.json'), JSON.stringify({ mcpServers: { a: { command: 'y' }, b: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }));
    const [config, project] = await loadProjectMcp(dir.path, store);
    expect(config!.subject.digest).toBe(mcpServersDigest(servers));
    expect(project!.servers.map((spec) => spec.name)).toEqual(['b']);
    expect(project!.problems).toEqual([expect.objectContaining({ name: 'a', reason: 'rein.config.json defines a too; that entry is used' })]);
    await store.trust(config!.subject);
    await writeFile(join(dir.path, 'rein.config.json'), JSON.stringify({ provider: 'openai', model: 'm', mcpServers: servers }));
    expect((await loadProjectMcp(dir.path, store))[0]!.status).toBe('trusted');
  });
});
