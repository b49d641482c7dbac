import { readlink, realpath, stat } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';

/** Where a path resolution ended: inside the workspace, or a model-visible failure. */
export type Resolved =
  | { ok: true; path: string; relative: string }
  | { ok: false; code: 'Denied' | 'NotFound'; message: string; reason: 'outside_workspace' | 'not_found' | 'is_directory' };

const inside = (root: string, candidate: string): boolean => candidate === root || candidate.startsWith(root + sep);

/**
 * The workspace boundary. Reads resolve existing paths canonically (symlinks followed) and must end inside the
 * root; writes need an existing parent directory whose canonical path is inside the root.
 */
export class Workspace {
  private constructor(
    readonly root: string,
    private readonly protectedPaths: readonly string[],
  ) {}

  /**
   * Open a workspace at `directory`, which must exist; its canonical path becomes the boundary. `protectedPaths`
   * (default: the `.rein` store directory inside it) are refused to every tool, so a model can never touch its log.
   */
  static async open(directory: string, options: { protectedPaths?: readonly string[] } = {}): Promise<Workspace> {
    const root = await realpath(resolve(directory));
    const requested = options.protectedPaths ?? [resolve(root, '.rein')];
    const protectedPaths = await Promise.all(requested.map(async (path) => realpath(resolve(root, path)).catch(() => resolve(root, path))));
    return new Workspace(root, protectedPaths);
  }

  /** True when `absolute` is a protected path or lies inside one. */
  isProtected(absolute: string): boolean {
    return this.protectedPaths.some((path) => inside(path, absolute));
  }

  /** The protected paths (canonical). */
  protectedList(): readonly string[] {
    return this.protectedPaths;
  }

  /** Show a path relative to the workspace root (`.` for the root itself). */
  display(absolute: string): string {
    return relative(this.root, absolute) || '.';
  }

  /** Resolve a path the model wants to read: it must exist and lie inside the workspace after symlinks. */
  async resolveExisting(requested: string): Promise<Resolved> {
    const lexical = resolve(this.root, requested);
    let canonical: string;
    try {
      canonical = await realpath(lexical);
    } catch {
      if (!inside(this.root, lexical)) return this.denied(requested);
      return { ok: false, code: 'NotFound', message: `${requested} does not exist`, reason: 'not_found' };
    }
    if (!inside(this.root, canonical) || this.isProtected(canonical) || this.isProtected(lexical)) return this.denied(requested);
    return { ok: true, path: canonical, relative: this.display(canonical) };
  }

  /** Resolve a path the model wants to write: its parent must exist inside the workspace; the target may not exist. */
  async resolveWritable(requested: string): Promise<Resolved> {
    const lexical = resolve(this.root, requested);
    if (!inside(this.root, lexical)) return this.denied(requested);
    let parent: string;
    try {
      parent = await realpath(dirname(lexical));
    } catch {
      return { ok: false, code: 'NotFound', message: `the parent directory of ${requested} does not exist`, reason: 'not_found' };
    }
    if (!inside(this.root, parent)) return this.denied(requested);
    const target = resolve(parent, lexical.slice(dirname(lexical).length + 1));
    if (this.isProtected(target) || this.isProtected(lexical)) return this.denied(requested);
    try {
      const existing = await realpath(target);
      if (!inside(this.root, existing)) return this.denied(requested);
      if ((await stat(existing)).isDirectory()) return { ok: false, code: 'Denied', message: `${requested} is a directory`, reason: 'is_directory' };
    } catch {
      // A new file: its canonical parent is inside, which is all a write needs.
    }
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
    return real !== '' && inside(this.root, real) && !this.isProtected(real);
  }

  private denied(requested: string): Resolved {
    return { ok: false, code: 'Denied', message: `${requested} is outside the workspace or protected`, reason: 'outside_workspace' };
  }
}
