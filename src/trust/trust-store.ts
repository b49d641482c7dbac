import { mkdir, rename, writeFile } from 'node:fs/promises';
import { readHostTextIfPresent } from '../util/read-regular-file.js';
import { reinConfigHome } from '../policy/protected-paths.js';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { ReinError } from '../host/host-errors.js';
import { lazySchema } from '../../models/lazy-schema.js';

/**
 * What a person trusts: one project file's content of one kind, by its path and the digest of that content. `mcp`:
 * the MCP servers a project file would start, `hooks`: the command hooks of `rein.config.json` (path: the file's place
 * in the workspace's real path — a symlinked file is read, but its trust is never that of the place it links to);
 * `plugin`: a project plugin's manifest and module (path: the workspace's real path, name: the plugin id). Trust is
 * bound to where the code runs and what it is, so a decision made for one place never starts anything in another.
 * One store holds them all, so one decision format covers everything a repository could make rein run.
 */
export interface TrustSubject {
  kind: string;
  /** Where it runs: the file's path in the canonical workspace (for a plugin: the canonical workspace). */
  path: string;
  /** What inside `path` is trusted, when a path holds several subjects (a plugin's id). */
  name?: string;
  digest: string;
}

const TrustEntry = lazySchema(() => z.object({ kind: z.string(), path: z.string(), name: z.string().optional(), digest: z.string(), trustedAt: z.string() }));
const TrustFile = lazySchema(() => z.object({ version: z.literal(1), entries: z.array(TrustEntry) }));
type TrustEntry = z.infer<typeof TrustEntry>;

/** Where trust decisions live: `$REIN_CONFIG_HOME/trust.json`, else `$XDG_CONFIG_HOME/rein` or `~/.config/rein` — never in a repository, and protected when a workspace holds it. */
export const trustFilePath = (env: NodeJS.ProcessEnv = process.env): string => {
  return join(reinConfigHome(env), 'trust.json');
};

/** One decision is about one subject: the same kind, path and name (the digest is what it decided about). */
const sameSubject = (entry: Pick<TrustSubject, 'kind' | 'path' | 'name'>, subject: Pick<TrustSubject, 'kind' | 'path' | 'name'>): boolean =>
  entry.kind === subject.kind && entry.path === subject.path && (entry.name ?? '') === (subject.name ?? '');

/** Is a subject trusted, changed since it was trusted, or never trusted? */
export type TrustStatus = 'trusted' | 'changed' | 'untrusted';

/**
 * The user's trust decisions for project files that would run something (MCP servers, project plugins). A file
 * is trusted for exactly the content whose digest was recorded: any change asks again. The store lives in the user's
 * configuration directory, out of every workspace, so a repository cannot ship its own trust. Writes are atomic
 * (a temporary file renamed over the old one).
 */
export class TrustStore {
  constructor(private readonly file: string = trustFilePath()) {}

  get location(): string {
    return this.file;
  }

  /** Whether `subject` is trusted as it is now. */
  async status(subject: TrustSubject): Promise<TrustStatus> {
    const entries = await this.entries();
    const entry = entries.find((candidate) => sameSubject(candidate, subject));
    if (!entry) return 'untrusted';
    return entry.digest === subject.digest ? 'trusted' : 'changed';
  }

  /** Record that the user trusts `subject` as it is now (replacing an earlier decision about the same file). */
  async trust(subject: TrustSubject, now: Date = new Date()): Promise<void> {
    const entries = (await this.entries()).filter((entry) => !sameSubject(entry, subject));
    entries.push({ kind: subject.kind, path: subject.path, ...(subject.name === undefined ? {} : { name: subject.name }), digest: subject.digest, trustedAt: now.toISOString() });
    await this.write(entries);
  }

  /** Forget the user's trust in a file. */
  async revoke(subject: Pick<TrustSubject, 'kind' | 'path' | 'name'>): Promise<boolean> {
    const entries = await this.entries();
    const kept = entries.filter((entry) => !sameSubject(entry, subject));
    if (kept.length === entries.length) return false;
    await this.write(kept);
    return true;
  }

  private async entries(): Promise<TrustEntry[]> {
    const text = await readHostTextIfPresent(this.file, this.file, (message) => new ReinError('CONFIG_INVALID', message));
    if (text === undefined) return [];
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ReinError('CONFIG_INVALID', `${this.file} is not valid JSON: ${(error as Error).message}`, { cause: error });
    }
    const parsed = TrustFile.safeParse(value);
    if (!parsed.success) throw new ReinError('CONFIG_INVALID', `${this.file} is not a trust file: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data.entries;
  }

  private async write(entries: TrustEntry[]): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ version: 1, entries }, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.file);
  }
}
