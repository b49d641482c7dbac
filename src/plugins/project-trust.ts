import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { canonicalPath, reinConfigHome } from '../policy/protected-paths.js';
import { TrustStore, trustFilePath, type TrustStatus, type TrustSubject } from '../trust/trust-store.js';

/**
 * Whether the user trusted a project plugin: one exact manifest and module (by digest) in one workspace. A small
 * interface so a host can keep its own decisions; `fileProjectTrust` keeps them in rein's trust store.
 */
export interface ProjectTrust {
  isTrusted(entry: { workspace: string; pluginId: string; digest: string }): Promise<boolean>;
  trust(entry: { workspace: string; pluginId: string; digest: string }): Promise<void>;
  /** Never trusted, or trusted for another digest (`changed`): what the prompt says. Optional for host implementations. */
  status?(entry: { workspace: string; pluginId: string; digest: string }): Promise<TrustStatus>;
}

/** A plugin as a subject of the trust store: kind `plugin`, its workspace's real path as the path, its id as the name. */
export const pluginTrustSubject = (entry: { workspace: string; pluginId: string; digest: string }): TrustSubject => ({ kind: 'plugin', path: canonicalPath(resolve(entry.workspace)), name: entry.pluginId, digest: entry.digest });

interface LegacyTrustFile {
  plugins?: Array<{ workspace?: unknown; pluginId?: unknown; digest?: unknown }>;
}

/**
 * Project-plugin trust in the same store as every other trust decision (`TrustStore`: `<config home>/trust.json`,
 * never in the project — a repository cannot trust its own plugins). A changed manifest or module has another digest
 * and must be trusted again. Decisions an earlier version wrote to `<config home>/trusted-plugins.json` still count
 * (read only; a new decision goes to the store).
 */
export const fileProjectTrust = (options: { path?: string; env?: Record<string, string | undefined>; clock?: () => number } = {}): ProjectTrust => {
  const store = new TrustStore(options.path ?? trustFilePath(options.env));
  const legacyPath = options.path === undefined ? join(reinConfigHome(options.env), 'trusted-plugins.json') : undefined;
  const legacyTrusts = async (entry: { workspace: string; pluginId: string; digest: string }): Promise<boolean> => {
    if (!legacyPath) return false;
    try {
      const parsed = JSON.parse(await readFile(legacyPath, 'utf8')) as LegacyTrustFile;
      return Array.isArray(parsed.plugins) && parsed.plugins.some((known) => known.workspace === entry.workspace && known.pluginId === entry.pluginId && known.digest === entry.digest);
    } catch {
      return false;
    }
  };
  const status = async (entry: { workspace: string; pluginId: string; digest: string }): Promise<TrustStatus> => {
    const now = await store.status(pluginTrustSubject(entry));
    return now !== 'trusted' && (await legacyTrusts(entry)) ? 'trusted' : now;
  };
  return {
    status,
    isTrusted: async (entry) => (await status(entry)) === 'trusted',
    trust: (entry) => store.trust(pluginTrustSubject(entry), new Date((options.clock ?? Date.now)())),
  };
};
