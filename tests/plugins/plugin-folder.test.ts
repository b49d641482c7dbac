import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestPluginFolder, pluginFolderLimits } from '../../src/plugins/plugin-folder.js';
import { discoverPlugins } from '../../src/plugins/plugin-loader.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

describe('the digest of a project plugin folder', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir('rein-plugin-folder-');
  });
  afterEach(async () => {
    await dir.remove();
  });

  const folder = async (files: Record<string, string>, name = 'p'): Promise<string> => {
    const root = join(dir.path, name);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), content);
    }
    await mkdir(root, { recursive: true });
    return root;
  };

  it('covers every file: a change, a new file, a renamed file or a new empty folder changes it; the same tree gives the same digest', async () => {
    const base = { 'rein-plugin.json': '{}', 'index.js': 'x', 'lib/util.js': 'y' };
    const digest = async (files: Record<string, string>, name: string) => (await digestPluginFolder(await folder(files, name), '{}')).digest;
    const original = await digest(base, 'a');
    expect(await digest(base, 'b')).toBe(original);
    expect(await digest({ ...base, 'lib/util.js': 'z' }, 'c')).not.toBe(original);
    expect(await digest({ ...base, 'lib/other.js': '' }, 'd')).not.toBe(original);
    expect(await digest({ 'rein-plugin.json': '{}', 'index.js': 'x', 'lib/utiL.js': 'y' }, 'e')).not.toBe(original);
    const withFolder = await folder(base, 'f');
    await mkdir(join(withFolder, 'empty'));
    expect((await digestPluginFolder(withFolder, '{}')).digest).not.toBe(original);
    // The manifest text rein parsed counts as well.
    expect((await digestPluginFolder(await folder(base, 'g'), '{ }')).digest).not.toBe(original);
  });

  it('no two different trees of file names and contents share a digest (property)', async () => {
    const tree = fc.dictionary(fc.stringMatching(/^[a-z]{1,3}(\/[a-z]{1,3})?$/), fc.string({ maxLength: 8 }), { maxKeys: 4 }).filter((files) => !Object.keys(files).some((path) => Object.keys(files).some((other) => other.startsWith(`${path}/`))));
    let run = 0;
    await fc.assert(
      fc.asyncProperty(tree, tree, async (left, right) => {
        run++;
        const a = (await digestPluginFolder(await folder(left, `l${run}`), '')).digest;
        const b = (await digestPluginFolder(await folder(right, `r${run}`), '')).digest;
        const same = JSON.stringify(Object.entries(left).sort()) === JSON.stringify(Object.entries(right).sort());
        expect(a === b).toBe(same);
      }),
      { numRuns: propertyRuns(40) },
    );
  });

  it('refuses a folder past its bounds, a link out of it, and a FIFO (without blocking on it) — each PLUGIN_FOLDER_INVALID', async () => {
    const many = await folder(Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`f${index}.js`, 'x'])), 'many');
    await expect(digestPluginFolder(many, '', { ...pluginFolderLimits, files: 5 })).rejects.toMatchObject({ code: 'PLUGIN_FOLDER_INVALID', message: expect.stringContaining('more than 5 files and folders') });
    await expect(digestPluginFolder(many, '', { ...pluginFolderLimits, bytes: 5 })).rejects.toMatchObject({ code: 'PLUGIN_FOLDER_INVALID', message: expect.stringContaining('more than 5 bytes') });
    const deep = await folder({ 'a/b/c/d.js': 'x' }, 'deep');
    await expect(digestPluginFolder(deep, '', { ...pluginFolderLimits, depth: 2 })).rejects.toMatchObject({ code: 'PLUGIN_FOLDER_INVALID' });
    expect((await digestPluginFolder(deep, '')).files).toBe(4);

    const linked = await folder({ 'index.js': 'x' }, 'linked');
    await writeFile(join(dir.path, 'outside.js'), 'evil');
    await symlink(join(dir.path, 'outside.js'), join(linked, 'lib.js'));
    await expect(digestPluginFolder(linked, '')).rejects.toMatchObject({ code: 'PLUGIN_FOLDER_INVALID', message: expect.stringContaining('lib.js is a link that leads out of the folder') });

    const inner = await folder({ 'index.js': 'x' }, 'inner');
    await symlink('index.js', join(inner, 'alias.js'));
    expect((await digestPluginFolder(inner, '')).files).toBe(2);

    const fifo = await folder({ 'index.js': 'x' }, 'fifo');
    execFileSync('mkfifo', [join(fifo, 'pipe')]);
    await expect(digestPluginFolder(fifo, '')).rejects.toMatchObject({ code: 'PLUGIN_FOLDER_INVALID', message: expect.stringContaining('pipe is not a regular file') });
  });

  it('a project plugin whose folder cannot be digested is discovered as failed, with why; a --plugin one is not walked', async () => {
    const workspace = join(dir.path, 'ws');
    const plugin = await folder({ 'rein-plugin.json': JSON.stringify({ id: 'p', main: 'index.js' }), 'index.js': 'x' }, 'ws/.rein-plugins/p');
    await writeFile(join(dir.path, 'outside.js'), 'evil');
    await symlink(join(dir.path, 'outside.js'), join(plugin, 'lib.js'));
    const [project] = await discoverPlugins({ workspace, env: { REIN_CONFIG_HOME: join(dir.path, 'home') } });
    expect(project).toMatchObject({ source: 'project', location: plugin, error: { code: 'PLUGIN_FOLDER_INVALID' } });
    const [cli] = await discoverPlugins({ workspace: join(dir.path, 'none'), cli: [plugin], env: { REIN_CONFIG_HOME: join(dir.path, 'home') } });
    expect(cli).toMatchObject({ source: 'cli', digest: expect.stringMatching(/^b3:/) });
  });
});
