import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { userConfigHome } from './plugin-loader.js';

/**
 * Whether the user trusted a project plugin: one exact manifest and module (by digest) in one workspace. A small
 * interface so the store behind it can change (a shared project-file trust module may replace this one).
 */
export interface ProjectTrust {
  isTrusted(entry: { workspace: string; pluginId: string; digest: string }): Promise<boolean>;
  trust(entry: { workspace: string; pluginId: string; digest: string }): Promise<void>;
}

interface TrustFile {
  version: 1;
  plugins: Array<{ workspace: string; pluginId: string; digest: string; trustedAt: string }>;
}

/**
 * Trust recorded in the user's config home (`<config home>/trusted-plugins.json`), never in the project: a
 * repository cannot trust its own plugins. A changed manifest or module has another digest and must be trusted again.
 */
export const fileProjectTrust = (options: { path?: string; env?: Record<string, string | undefined>; clock?: () => number } = {}): ProjectTrust => {
  const path = options.path ?? join(userConfigHome(options.env), 'trusted-plugins.json');
  const read = async (): Promise<TrustFile> => {
    try {
      const parsed = JSON.parse(await readFile(path, 'utf8')) as TrustFile;
      return Array.isArray(parsed.plugins) ? parsed : { version: 1, plugins: [] };
    } catch {
      return { version: 1, plugins: [] };
    }
  };
  return {
    async isTrusted(entry) {
      return (await read()).plugins.some((known) => known.workspace === entry.workspace && known.pluginId === entry.pluginId && known.digest === entry.digest);
    },
    async trust(entry) {
      const file = await read();
      const plugins = file.plugins.filter((known) => !(known.workspace === entry.workspace && known.pluginId === entry.pluginId));
      plugins.push({ ...entry, trustedAt: new Date((options.clock ?? Date.now)()).toISOString() });
      await mkdir(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify({ version: 1, plugins }, null, 2)}\n`, { mode: 0o600 });
      await rename(temporary, path);
    },
  };
};
