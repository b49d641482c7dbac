import { constants } from 'node:fs';
import { open, readdir, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { isInside } from '../policy/protected-paths.js';
import { PluginError } from './plugin-errors.js';
import { createBlake3 } from '../util/blake3.js';

/**
 * How much of a project plugin's folder rein digests before it can be trusted. Every file counts (a module the main
 * one imports is as much the plugin's code as `main`), so a folder past these bounds cannot be trusted as a project
 * plugin at all (`PLUGIN_FOLDER_INVALID`): install it as a user plugin or pass it with `--plugin` instead.
 */
export const pluginFolderLimits = Object.freeze({ files: 10_000, bytes: 64 * 1024 * 1024, depth: 32 });
// `files` counts every entry (files, folders, links).

/** What a folder digest covered. */
export interface PluginFolderDigest {
  /** `b3:` and the BLAKE3 of the manifest text and every entry of the folder (path, kind, link target or content). */
  digest: string;
  /** Entries digested: files, folders and links. */
  files: number;
  bytes: number;
}

const size = (bytes: number): string => (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes.toLocaleString('en-US')} bytes`);

const invalid = (directory: string, why: string): PluginError => new PluginError('PLUGIN_FOLDER_INVALID', `cannot digest the project plugin folder ${directory} whole, so it cannot be trusted: ${why}`);

/**
 * The digest a project plugin is trusted by: the manifest text rein parsed, then every entry under `directory` in
 * name order — a directory by its path, a file by its path, size and bytes, a symbolic link by its path and target
 * (never followed; one that leads out of the folder, or nowhere, is refused: its target is nobody's to protect).
 * Files are opened without following links and without blocking, and anything that is not a regular file (a FIFO, a
 * socket, a device) is refused, so a planted FIFO cannot hang discovery. More than `limits` is refused too: a
 * partial digest would let the part left out change unnoticed.
 */
export const digestPluginFolder = async (directory: string, manifestText: string, limits: { files: number; bytes: number; depth: number } = pluginFolderLimits): Promise<PluginFolderDigest> => {
  const root = await realpath(directory);
  const hasher = await createBlake3();
  hasher.init();
  const field = (text: string) => hasher.update(`${Buffer.byteLength(text)}:${text}`);
  field(manifestText);
  let files = 0;
  let bytes = 0;
  const walk = async (folder: string, relative: string, depth: number): Promise<void> => {
    if (depth > limits.depth) throw invalid(directory, `${relative} is nested deeper than ${limits.depth} directories`);
    const entries = (await readdir(folder, { withFileTypes: true })).sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(folder, entry.name);
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      if (++files > limits.files) throw invalid(directory, `it holds more than ${limits.files.toLocaleString('en-US')} files and folders`);
      if (entry.isDirectory()) {
        field(`d ${name}`);
        await walk(path, name, depth + 1);
        continue;
      }
      if (entry.isSymbolicLink()) {
        const target = await readlink(path);
        const resolved = await realpath(path).catch(() => undefined);
        if (resolved === undefined || !isInside(root, resolved)) throw invalid(directory, `${name} is a link that leads ${resolved === undefined ? 'nowhere' : 'out of the folder'} (${target})`);
        field(`l ${name}`);
        field(target);
        continue;
      }
      if (!entry.isFile()) throw invalid(directory, `${name} is not a regular file`);
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) throw invalid(directory, `${name} is not a regular file`);
        if (bytes + stat.size > limits.bytes) throw invalid(directory, `its files hold more than ${size(limits.bytes)}`);
        const content = await handle.readFile();
        bytes += content.length;
        if (bytes > limits.bytes) throw invalid(directory, `its files hold more than ${size(limits.bytes)}`);
        field(`f ${name}`);
        hasher.update(`${content.length}:`);
        hasher.update(content);
      } finally {
        await handle.close();
      }
    }
  };
  await walk(root, '', 0);
  return { digest: `b3:${hasher.digest('hex')}`, files, bytes };
};
