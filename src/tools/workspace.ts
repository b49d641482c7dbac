import { realpathSync } from 'node:fs';
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { canonicalPath, isInside, isInstructionFileName, protectedKey, workspacePathsOf } from '../policy/protected-paths.js';

/** Why a path was refused: the validation code the pipeline records. */
export type PathRefusal = 'outside_workspace' | 'not_found' | 'is_directory' | 'not_a_file' | 'invalid_path' | 'nul_byte';

/** Where a path resolution ended: inside the workspace, or a model-visible failure. */
export type Resolved =
  | { ok: true; path: string; relative: string }
  | { ok: false; code: 'Denied' | 'NotFound' | 'InvalidInput'; message: string; reason: PathRefusal };

/** A file-system entry that is neither a regular file, a directory nor a symlink (FIFO, socket, device). */
const special = (info: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): boolean => !info.isFile() && !info.isDirectory() && !info.isSymbolicLink();

/**
 * The workspace boundary. Every check compares real paths: the root is canonicalised when the workspace opens,
 * existing paths are resolved with symlinks followed, and paths that do not exist yet are resolved through their
 * nearest existing ancestor. Protected paths (see `protected-paths.ts`) are refused in every alias.
 */
export class Workspace {
  private readonly protectedKeys: readonly string[];
  private readonly hiddenKeys: readonly string[];

  private constructor(
    readonly root: string,
    private readonly protectedPaths: readonly string[],
    private readonly readablePaths: readonly string[],
  ) {
    this.protectedKeys = protectedPaths.map(protectedKey);
    const readable = new Set(readablePaths);
    this.hiddenKeys = protectedPaths.filter((path) => !readable.has(path)).map(protectedKey);
  }

  /**
   * Open a workspace at `directory`, which must exist; its real path becomes the boundary. The protected entries
   * of every workspace (`.rein`, `rein.config.json`, …) are always protected; `protectedPaths` adds more (the store
   * directory when it lives elsewhere inside the workspace), each compared by real path.
   */
  static async open(directory: string, options: { protectedPaths?: readonly string[] } = {}): Promise<Workspace> {
    // Synchronous (the same realpath(3)): a workspace opens for every harness, and the async call's thread-pool hop costs more than the call.
    const root = realpathSync.native(resolve(directory));
    // The git configuration and the project instruction files are protected for writing but stay readable.
    const paths = workspacePathsOf(root, options.protectedPaths ?? []);
    return new Workspace(root, paths.protected, paths.readable);
  }

  /** True when `absolute` (a canonical path) is a protected path or lies inside one. */
  isProtected(absolute: string): boolean {
    const key = protectedKey(absolute);
    return this.protectedKeys.some((path) => isInside(path, key));
  }

  /**
   * True when `absolute` may not be read: protected and not one of the readable protected paths (the repository's git
   * configuration and hooks, which file tools may read but never write).
   */
  isHidden(absolute: string): boolean {
    const key = protectedKey(absolute);
    return this.hiddenKeys.some((path) => isInside(path, key));
  }

  /** The protected paths that are read-only rather than hidden (canonical): the sandbox binds them read-only. */
  readableList(): readonly string[] {
    return this.readablePaths;
  }

  /** The protected paths (canonical). */
  protectedList(): readonly string[] {
    return this.protectedPaths;
  }

  /** True when the canonical path `absolute` lies inside the workspace and is not protected. */
  allows(absolute: string): boolean {
    return isInside(this.root, absolute) && !this.isProtected(absolute);
  }

  /** True when the canonical path `absolute` lies inside the workspace and may be read (not hidden). */
  readable(absolute: string): boolean {
    return isInside(this.root, absolute) && !this.isHidden(absolute);
  }

  /** Show a path relative to the workspace root (`.` for the root itself). */
  display(absolute: string): string {
    return relative(this.root, absolute) || '.';
  }

  /** Resolve a path the model wants to read: it must exist and lie inside the workspace after symlinks. */
  async resolveExisting(requested: string): Promise<Resolved> {
    const malformed = this.malformed(requested);
    if (malformed) return malformed;
    const lexical = resolve(this.root, requested);
    let canonical: string;
    try {
      canonical = await realpath(lexical);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') return this.tooLong(requested);
      if (!this.readable(canonicalPath(lexical)) || this.isHidden(lexical)) return this.denied(requested);
      return { ok: false, code: 'NotFound', message: `${requested} does not exist`, reason: 'not_found' };
    }
    if (!this.readable(canonical) || this.isHidden(lexical)) return this.denied(requested);
    return { ok: true, path: canonical, relative: this.display(canonical) };
  }

  /**
   * Resolve a path to a regular file the model wants to read: as `resolveExisting`, and a FIFO, socket or device is
   * `InvalidInput` before anything opens it (opening a FIFO would block).
   */
  async resolveFile(requested: string): Promise<Resolved> {
    const resolved = await this.resolveExisting(requested);
    if (!resolved.ok) return resolved;
    const info = await lstat(resolved.path).catch(() => undefined);
    if (info && special(info)) return this.notAFile(requested);
    return resolved;
  }

  /** Resolve a path the model wants to write: its parent must exist inside the workspace; the target may not exist. */
  async resolveWritable(requested: string): Promise<Resolved> {
    const malformed = this.malformed(requested);
    if (malformed) return malformed;
    const lexical = resolve(this.root, requested);
    if (!this.allows(canonicalPath(lexical)) || this.isProtected(lexical)) return this.denied(requested);
    // A project instruction file in any folder (AGENTS.md, CLAUDE.md) steers the next turn: no file tool writes one.
    if (isInstructionFileName(basename(lexical))) return { ok: false, code: 'Denied', message: `${requested} is a project instruction file (rein loads it into the model's instructions): file tools do not write it; ask the user to change it`, reason: 'outside_workspace' };
    let parent: string;
    try {
      parent = await realpath(dirname(lexical));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENAMETOOLONG') return this.tooLong(requested);
      return { ok: false, code: 'NotFound', message: `the parent directory of ${requested} does not exist`, reason: 'not_found' };
    }
    if (!isInside(this.root, parent)) return this.denied(requested);
    const target = resolve(parent, basename(lexical));
    if (!this.allows(target)) return this.denied(requested);
    const link = await lstat(target).catch(() => undefined);
    if (link && special(link)) return this.notAFile(requested);
    if (link?.isSymbolicLink()) {
      // Writing replaces the link itself, but a link that points out or at a protected path is refused all the same.
      const pointed = await realpath(target).catch(async () => canonicalPath(resolve(parent, await readlink(target).catch(() => basename(lexical)))));
      if (!this.allows(pointed)) return this.denied(requested);
    }
    const existing = await stat(target).catch(() => undefined);
    if (existing?.isDirectory()) return { ok: false, code: 'Denied', message: `${requested} is a directory`, reason: 'is_directory' };
    return { ok: true, path: target, relative: this.display(target) };
  }

  /**
   * After opening a resolved path, check where the descriptor really points (Linux `/proc/self/fd`), so a symlink
   * swapped in between the check and the open is caught. Where `/proc` is missing the path is resolved again.
   */
  async verifyOpened(descriptor: number, path: string): Promise<boolean> {
    let real: string;
    try {
      real = await readlink(`/proc/self/fd/${descriptor}`);
    } catch {
      real = await realpath(path).catch(() => '');
    }
    return real !== '' && this.readable(real);
  }

  private malformed(requested: string): Resolved | undefined {
    // Refused before any system call (Node would throw); the same failure the tools give for a NUL byte elsewhere.
    if (requested.includes('\0')) return { ok: false, code: 'InvalidInput', message: '`path` contains a NUL byte, which no file name or command can hold', reason: 'nul_byte' };
    if (Buffer.byteLength(requested) > 4_095 || requested.split('/').some((component) => Buffer.byteLength(component) > 255)) return this.tooLong(requested);
    return undefined;
  }

  private tooLong(requested: string): Resolved {
    return { ok: false, code: 'InvalidInput', message: `the path ${requested.slice(0, 80)}… is longer than the file system allows`, reason: 'invalid_path' };
  }

  private notAFile(requested: string): Resolved {
    return { ok: false, code: 'InvalidInput', message: `${requested} is not a regular file (a FIFO, socket or device); file tools read and write regular files only`, reason: 'not_a_file' };
  }

  private denied(requested: string): Resolved {
    return { ok: false, code: 'Denied', message: `${requested} is outside the workspace or protected`, reason: 'outside_workspace' };
  }
}
