import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrustStore, trustFilePath } from '../../src/trust/trust-store.js';
import { loadProjectMcp, mcpServersDigest } from '../../src/mcp/project-mcp.js';
import { fileProjectTrust } from '../../src/plugins/project-trust.js';
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
  it('project plugins share the store and its format with MCP files: one decision per plugin and workspace, by digest', async () => {
    const env = { REIN_CONFIG_HOME: join(dir.path, 'home') };
    const store = new TrustStore(trustFilePath(env));
    const plugins = fileProjectTrust({ env, clock: () => Date.UTC(2026, 0, 1) });
    const entry = { workspace: '/w', pluginId: 'guard', digest: 'b3:one' };
    expect(await plugins.status!(entry)).toBe('untrusted');
    await store.trust({ kind: 'mcp', path: '/w/.mcp.json', digest: 'sha256:a' });
    await plugins.trust(entry);
    await plugins.trust({ ...entry, pluginId: 'other' });
    expect(await plugins.isTrusted(entry)).toBe(true);
    expect(await plugins.status!({ ...entry, digest: 'b3:two' })).toBe('changed');
    expect(await plugins.isTrusted({ ...entry, workspace: '/elsewhere' })).toBe(false);
    // The same store answers for the plugin, as a subject of kind `plugin` named by its id.
    expect(await store.status({ kind: 'plugin', path: '/w', name: 'guard', digest: 'b3:one' })).toBe('trusted');
    expect(await store.status({ kind: 'mcp', path: '/w/.mcp.json', digest: 'sha256:a' })).toBe('trusted');
    const file = JSON.parse(await readFile(store.location, 'utf8')) as { version: number; entries: unknown[] };
    expect(file).toEqual({
      version: 1,
      entries: [
        { kind: 'mcp', path: '/w/.mcp.json', digest: 'sha256:a', trustedAt: expect.any(String) },
        { kind: 'plugin', path: '/w', name: 'guard', digest: 'b3:one', trustedAt: '2026-01-01T00:00:00.000Z' },
        { kind: 'plugin', path: '/w', name: 'other', digest: 'b3:one', trustedAt: '2026-01-01T00:00:00.000Z' },
      ],
    });
    // Revoking one plugin leaves the other and the MCP file trusted.
    expect(await store.revoke({ kind: 'plugin', path: '/w', name: 'guard' })).toBe(true);
    expect(await plugins.isTrusted(entry)).toBe(false);
    expect(await plugins.isTrusted({ ...entry, pluginId: 'other' })).toBe(true);
  });

  it('a plugin trusted by an earlier version (trusted-plugins.json) stays trusted; a new decision goes to the store', async () => {
    const env = { REIN_CONFIG_HOME: join(dir.path, 'home') };
    await mkdir(env.REIN_CONFIG_HOME, { recursive: true });
    await writeFile(join(env.REIN_CONFIG_HOME, 'trusted-plugins.json'), JSON.stringify({ version: 1, plugins: [{ workspace: '/w', pluginId: 'old', digest: 'b3:x', trustedAt: '2026-01-01T00:00:00.000Z' }] }));
    const plugins = fileProjectTrust({ env });
    expect(await plugins.isTrusted({ workspace: '/w', pluginId: 'old', digest: 'b3:x' })).toBe(true);
    expect(await plugins.isTrusted({ workspace: '/w', pluginId: 'old', digest: 'b3:y' })).toBe(false);
    await plugins.trust({ workspace: '/w', pluginId: 'old', digest: 'b3:y' });
    expect(JSON.parse(await readFile(trustFilePath(env), 'utf8')).entries).toEqual([expect.objectContaining({ kind: 'plugin', name: 'old', digest: 'b3:y' })]);
  });
});
