import { chmodSync, lchownSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { TreeEntry } from '../../models/workspace.records.js';
import { blake3Hex, loadBlake3 } from '../util/blake3.js';

/** One step of a rewind plan: make `path` hold `after`, or remove it. */
export interface RewindOperation {
  path: string;
  after?: TreeEntry;
}

/** What a rewind could not do: a folder that still holds files the capture leaves out, a content never stored. */
export interface ApplyReport {
  kept: string[];
}

const lstatOrUndefined = (path: string): Stats | undefined => {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
};

const depth = (path: string): number => path.split('/').length;

/**
 * Carry out a rewind plan in the workspace at `root`, so that a crash at any moment leaves a state the same call
 * finishes: every operation first looks at what is there and does only what is missing. Removals go deepest first
 * (a folder only once empty: one still holding files the capture leaves out is kept and reported); then folders are
 * made and files and links written shallowest first, each file through a temp file next to it
 * (`.<name>.rein-<12 hex>.tmp`, named by the plan and the path, so a rerun reuses it) renamed over the old one; the
 * folders' modes are set last. Contents come from `content` (the blob store). As root, what rein writes is given to
 * the workspace's owner, as the sandbox's writes are.
 */
export const applyRewind = async (root: string, operations: readonly RewindOperation[], planId: string, content: (ref: string) => Promise<Uint8Array>): Promise<ApplyReport> => {
  // A rewind finished by a new process (after a crash) may be its first use of BLAKE3.
  await loadBlake3();
  const kept: string[] = [];
  const owner = process.getuid?.() === 0 ? statSync(root) : undefined;
  const own = (path: string) => {
    if (owner) lchownSync(path, owner.uid, owner.gid);
  };
  const removals = operations.filter((operation) => !operation.after).sort((left, right) => depth(right.path) - depth(left.path));
  for (const { path } of removals) {
    const absolute = join(root, path);
    const found = lstatOrUndefined(absolute);
    if (!found) continue;
    if (!found.isDirectory()) {
      unlinkSync(absolute);
      continue;
    }
    try {
      rmdirSync(absolute);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOTEMPTY' && (error as { code?: string }).code !== 'EEXIST') throw error;
      kept.push(path);
    }
  }
  const writes = operations.filter((operation) => operation.after).sort((left, right) => depth(left.path) - depth(right.path) || (left.path < right.path ? -1 : 1));
  for (const { path, after } of writes) {
    const absolute = join(root, path);
    const found = lstatOrUndefined(absolute);
    const entry = after!;
    if (entry.type === 'dir') {
      if (found && !found.isDirectory()) unlinkSync(absolute);
      if (!found || !found.isDirectory()) {
        // Writable by rein until the end, when its recorded mode is set.
        mkdirSync(absolute, { mode: 0o700 });
        own(absolute);
      } else if ((found.mode & 0o200) === 0) chmodSync(absolute, found.mode | 0o700);
      continue;
    }
    if (found?.isDirectory()) rmSync(absolute, { recursive: true, force: true });
    if (entry.type === 'symlink') {
      if (found?.isSymbolicLink() && readlinkSync(absolute, 'utf8') === entry.target) continue;
      if (found && !found.isDirectory()) unlinkSync(absolute);
      symlinkSync(entry.target, absolute);
      own(absolute);
      continue;
    }
    if (found?.isFile() && found.size === entry.size && `artifact://blake3/${blake3Hex(readFileSync(absolute))}` === entry.content) {
      if ((found.mode & 0o7777) !== entry.mode) chmodSync(absolute, entry.mode);
      continue;
    }
    if (entry.unrestorable) {
      kept.push(path);
      continue;
    }
    const bytes = await content(entry.content);
    const temporary = join(dirname(absolute), `.${basename(absolute)}.rein-${blake3Hex(`${planId}\0${path}`).slice(0, 12)}.tmp`);
    writeFileSync(temporary, bytes, { mode: 0o600 });
    chmodSync(temporary, entry.mode);
    own(temporary);
    if (found && !found.isFile()) unlinkSync(absolute);
    renameSync(temporary, absolute);
  }
  for (const { path, after } of [...writes].reverse()) {
    if (after?.type !== 'dir') continue;
    const absolute = join(root, path);
    const found = lstatOrUndefined(absolute);
    if (found?.isDirectory() && (found.mode & 0o7777) !== after.mode) chmodSync(absolute, after.mode);
  }
  return { kept };
};
