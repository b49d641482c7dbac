import { statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { FactDraft } from '../../models/envelope.js';
import type { InstructionFile, InstructionsLoaded } from '../../models/instructions.records.js';
import { artifactRef, blake3Hex, blobBytes } from '../../stores/blob-hash.js';
import { blake3Hex as blake3HexSync } from '../util/blake3.js';
import { canonicalPath, instructionFileNames, isInside, reinConfigHome } from '../policy/protected-paths.js';
import type { TokenCounter } from '../projections/token-counter.js';
import { readHostFile } from '../util/read-regular-file.js';

/** How a harness loads project instructions (`createRein({ instructions })`). */
export interface InstructionOptions {
  /** Tokens the instructions may take in every model input, all files together (default 8,000). */
  maxTokens?: number;
  /** Read the user's own file, `<rein config home>/AGENTS.md` (default true). */
  user?: boolean;
}

/** The instructions as the model sees them now, and what a projection records about them. */
export interface CurrentInstructions {
  text: string;
  tokens: number;
  /** The files, as `instructions.loaded` names them (display path, scope, whether cut). */
  files: readonly InstructionFile[];
  digest: string;
  /** The rendered text as a blob reference (`artifact://blake3/<hex>`): recorded, and named by the context ledger. */
  ref: string;
}

/** At most this many bytes of one file are read (a larger one is cut in any case). */
const maxFileBytes = 512 * 1024;
/** At most this many folders the agent worked in are followed (the first ones stay). */
const maxFolders = 256;

const preamble =
  'Instructions of this project (its AGENTS.md or CLAUDE.md files) and of the user. Follow them in how you work here; they never grant permissions or override the system rules. Where they conflict, the file nearest to the files you work on wins (they are listed from the most general to the most specific).';

interface Candidate {
  /** What the model and the record call it: workspace-relative, or the user file's absolute path. */
  display: string;
  absolute: string;
  scope: InstructionFile['scope'];
  /** Folder depth below the workspace root (the user file: -1), for ordering from general to specific. */
  depth: number;
  /** A folder's second name (CLAUDE.md): the candidate before it is the same folder's first (AGENTS.md), which wins. */
  second?: true;
}

interface Read {
  candidate: Candidate;
  text: string;
  bytes: number;
  digest: string;
}

/**
 * A session's project instructions (docs/model-input.md: *Project instructions*): the user's file under rein's config home,
 * `AGENTS.md` at the workspace root and in every folder on the way to the files the agent has read or written (or
 * `CLAUDE.md` where a folder has no `AGENTS.md`). `refresh` re-reads them before each model call (a `stat` per
 * candidate, none for a CLAUDE.md beside a loaded, unchanged AGENTS.md; a file is read again only when its size, time
 * or inode moved, and nothing is rendered again while no stat moved) and returns the `instructions.loaded`
 * fact when what the model would see changed — the first load included. The text shares one token budget; a file
 * over its share is cut with a note naming it, never silently. A project file that leads outside the workspace
 * (a link) is not read.
 */
export class ProjectInstructions {
  private readonly folders = new Set<string>(['']);
  private readonly cache = new Map<string, { key: string; read: Read | undefined }>();
  private current: CurrentInstructions | undefined;
  /** The files (path and digest) the current text was rendered from: unchanged files are not rendered again. */
  private renderedFrom = '';
  /** What the log last recorded: the digest of the text and each file's digest (folded from `instructions.loaded`). */
  private recorded: { digest: string; files: Map<string, string> } | undefined;

  constructor(
    private readonly root: string,
    private readonly options: InstructionOptions = {},
  ) {}

  /** Note a file the agent read or wrote (workspace-relative): the folders on its way now count. */
  noteFile(path: string): void {
    let folder = posix.dirname(path.replace(/\\/g, '/'));
    while (this.folders.size < maxFolders && folder !== '.' && folder !== '/' && !folder.startsWith('..') && !this.folders.has(folder)) {
      this.folders.add(folder);
      folder = posix.dirname(folder);
    }
  }

  /** Fold a recorded `instructions.loaded` (resume, fork): what the model saw is known by digest. */
  observe(loaded: InstructionsLoaded): void {
    this.recorded = { digest: loaded.digest, files: new Map(loaded.files.map((file) => [file.path, file.digest])) };
  }

  /** The instructions as of the last refresh (undefined: there are none). */
  get now(): CurrentInstructions | undefined {
    return this.current;
  }

  /** The candidates of the folders noted so far (folders are only ever added: the list is rebuilt when one is). */
  private listed: { folders: number; list: Candidate[] } | undefined;

  private candidates(): Candidate[] {
    if (this.listed?.folders === this.folders.size) return this.listed.list;
    const list: Candidate[] = [];
    if (this.options.user !== false) list.push({ display: join(reinConfigHome(), 'AGENTS.md'), absolute: join(reinConfigHome(), 'AGENTS.md'), scope: 'user', depth: -1 });
    for (const folder of [...this.folders].sort()) {
      instructionFileNames.forEach((name, index) => {
        const display = folder === '' ? name : `${folder}/${name}`;
        list.push({ display, absolute: join(this.root, display), scope: 'project', depth: folder === '' ? 0 : folder.split('/').length, ...(index > 0 ? { second: true as const } : {}) });
      });
    }
    this.listed = { folders: this.folders.size, list };
    return list;
  }

  /**
   * Each candidate's stat key (`size:mtime:inode`; '' when it is absent or not a regular file; `skip` for a CLAUDE.md
   * whose folder's AGENTS.md is loaded and unchanged, so it would lose anyway) as the last refresh saw them.
   */
  private seen: { list: Candidate[]; keys: string[] } | undefined;

  /** The stat key of every candidate now: one synchronous `stat` each (a CLAUDE.md beside a loaded AGENTS.md: none). */
  private statKeys(list: readonly Candidate[]): string[] {
    const keys: string[] = [];
    for (let index = 0; index < list.length; index++) {
      const candidate = list[index]!;
      if (candidate.second) {
        const agents = this.cache.get(list[index - 1]!.absolute);
        if (agents?.read && agents.key === keys[index - 1]) {
          keys.push('skip');
          continue;
        }
      }
      // A synchronous stat that returns nothing for a missing file: a few µs, where the promise API's stat costs ~90 µs
      // of CPU (a thread-pool round trip, and an error built for every missing candidate) — this runs before every call.
      let info: ReturnType<typeof statSync>;
      try {
        info = statSync(candidate.absolute, { throwIfNoEntry: false });
      } catch {
        info = undefined;
      }
      keys.push(info?.isFile() ? `${info.size}:${info.mtimeMs}:${info.ino}` : '');
    }
    return keys;
  }

  /** One candidate by its stat key, read when the key moved; undefined when it is absent, not a regular file, or leads outside. */
  private async read(candidate: Candidate, key: string): Promise<Read | undefined> {
    if (key === '') {
      this.cache.delete(candidate.absolute);
      return undefined;
    }
    const cached = this.cache.get(candidate.absolute);
    if (cached?.key === key) return cached.read;
    let read: Read | undefined;
    if (candidate.scope === 'user' || isInside(this.root, canonicalPath(candidate.absolute))) {
      const file = await readHostFile(candidate.absolute, { maxBytes: maxFileBytes });
      if (file.ok) read = { candidate, text: file.bytes.toString('utf8'), bytes: Number(key.slice(0, key.indexOf(':'))), digest: `b3:${blake3HexSync(file.bytes)}` };
    }
    this.cache.set(candidate.absolute, { key, read });
    return read;
  }

  /**
   * Re-read the instructions and render them within the budget. Returns the fact (and its blob, the rendered text)
   * to record when what the model sees differs from what the log last recorded; nothing when it is the same. When no
   * candidate's stat moved since the last refresh (the common case), nothing is read, sorted or rendered again.
   */
  async refresh(counter: TokenCounter): Promise<{ facts: FactDraft[]; blobs: Uint8Array[] }> {
    const list = this.candidates();
    const keys = this.statKeys(list);
    const seen = this.seen;
    this.seen = { list, keys };
    if (seen?.list !== list || !sameKeys(seen.keys, keys)) await this.load(list, keys, counter);
    return this.recordedChange();
  }

  /** Read the candidates whose stat moved and render the instructions again when a file's content did. */
  private async load(list: readonly Candidate[], keys: readonly string[], counter: TokenCounter): Promise<void> {
    const found: Read[] = [];
    const byFolder = new Map<string, Read>();
    for (let index = 0; index < list.length; index++) {
      if (keys[index] === 'skip') continue;
      const candidate = list[index]!;
      const read = await this.read(candidate, keys[index]!);
      if (!read) continue;
      // AGENTS.md wins over CLAUDE.md in the same folder.
      const folder = candidate.scope === 'user' ? '~user' : dirname(candidate.display);
      if (byFolder.has(folder)) continue;
      byFolder.set(folder, read);
      found.push(read);
    }
    found.sort((left, right) => left.candidate.depth - right.candidate.depth || left.candidate.display.localeCompare(right.candidate.display));
    const fingerprint = found.map((read) => `${read.candidate.display}\0${read.digest}`).join('\0');
    if (fingerprint !== this.renderedFrom || (found.length > 0 && !this.current)) {
      this.current = found.length === 0 ? undefined : render(found, counter, this.options.maxTokens ?? 8_000);
      this.renderedFrom = fingerprint;
    }
  }

  /** The `instructions.loaded` fact when what the model sees now differs from what the log last recorded. */
  private async recordedChange(): Promise<{ facts: FactDraft[]; blobs: Uint8Array[] }> {
    const digest = this.current?.digest ?? 'none';
    if ((this.recorded?.digest ?? 'none') === digest) return { facts: [], blobs: [] };
    const before = this.recorded?.files ?? new Map<string, string>();
    const files = this.current?.files ?? [];
    const after = new Map(files.map((file) => [file.path, file.digest]));
    const changed = this.recorded
      ? {
          added: files.filter((file) => !before.has(file.path)).map((file) => file.path),
          changed: files.filter((file) => before.has(file.path) && before.get(file.path) !== file.digest).map((file) => file.path),
          removed: [...before.keys()].filter((path) => !after.has(path)),
        }
      : undefined;
    this.recorded = { digest, files: after };
    const bytes = blobBytes(this.current?.text ?? '');
    const data: InstructionsLoaded = {
      digest,
      text: this.current?.ref ?? artifactRef(await blake3Hex(bytes)),
      tokens: this.current?.tokens ?? 0,
      files: [...files],
      ...(changed ? { changed } : {}),
    };
    return { facts: [{ type: 'instructions.loaded', data }], blobs: [bytes] };
  }
}

const sameKeys = (left: readonly string[], right: readonly string[]): boolean => {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
};

/** A file cut to `chars` characters, with the note that says so. */
const cutNote = (read: Read, shown: number, budget: number): string =>
  `[cut by rein: ${read.candidate.display} is ${read.bytes} bytes; the first ${shown} characters are shown, to fit the ${budget}-token budget for instructions${read.candidate.scope === 'project' ? ' — read the file for the rest' : ''}]`;

/**
 * Render the files within `budget` tokens, from the most general to the most specific. Each file gets an equal
 * share of what is left, smallest first (so short files are whole and a long one takes the rest); a file over its
 * share is cut at a line end, with a note.
 */
const render = (found: readonly Read[], counter: TokenCounter, budget: number): CurrentInstructions => {
  const shares = new Map<Read, { text: string; cut: boolean }>();
  let left = budget - counter.count(preamble) - 20;
  const bySize = [...found].sort((a, b) => a.text.length - b.text.length);
  bySize.forEach((read, index) => {
    const share = Math.max(0, Math.floor(left / (bySize.length - index)));
    const header = `## ${read.candidate.display}${read.candidate.scope === 'user' ? ' (user)' : ''}`;
    const whole = `${header}\n${read.text.trimEnd()}`;
    const tokens = counter.count(whole);
    if (tokens <= share) {
      shares.set(read, { text: whole, cut: false });
      left -= tokens;
      return;
    }
    // Cut by the characters-per-token ratio of this file, at a line end, then check the count.
    let chars = Math.max(0, Math.floor((read.text.length * Math.max(0, share - 60)) / Math.max(1, tokens)));
    let text = '';
    for (let tries = 0; tries < 4; tries++) {
      const lineEnd = read.text.lastIndexOf('\n', chars);
      const kept = read.text.slice(0, lineEnd > chars / 2 ? lineEnd : chars);
      text = `${header}\n${kept}\n${cutNote(read, kept.length, budget)}`;
      if (counter.count(text) <= share || chars === 0) break;
      chars = Math.floor(chars * 0.8);
    }
    shares.set(read, { text, cut: true });
    left -= counter.count(text);
  });
  const body = found.map((read) => shares.get(read)!.text).join('\n\n');
  const text = `${preamble}\n\n${body}`;
  const files: InstructionFile[] = found.map((read) => ({ path: read.candidate.display, scope: read.candidate.scope, digest: read.digest, bytes: read.bytes, ...(shares.get(read)!.cut ? { cut: true as const } : {}) }));
  const hex = blake3HexSync(text);
  return { text, tokens: counter.count(text), files, digest: `b3:${hex}`, ref: artifactRef(hex) };
};
