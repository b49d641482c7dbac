import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { CorruptRecordError } from './store-errors.js';

/**
 * Damage LevelDB itself would hide. Without paranoid checks (classic-level does not expose them) LevelDB recovers a
 * damaged or truncated `.log` by silently dropping what follows the damage. Two checks turn that into an error:
 * - the info `LOG` LevelDB writes on each open names every range it dropped during recovery;
 * - `rein-watermark.json` records the head the stream had when it was last closed cleanly (after a synced write),
 *   so a later open that finds fewer records knows acknowledged records were lost.
 * A detected drop is also written into the watermark, so the stream keeps failing loudly on later opens.
 */
export const WATERMARK_FILE = 'rein-watermark.json';

/** The watermark file's content. */
export interface Watermark {
  head: number;
  damaged?: string;
  /**
   * The stream's seal at `head` (docs/architecture.md: *The chain*), as hex: written with the head at a clean close, so that records
   * cut off the end later are caught by `rein verify` even where the watermark's own head was rewritten.
   */
  seal?: string;
}

/** The stream holds fewer records than its last clean close recorded: records were cut off its end. */
export class StreamCutShortError extends CorruptRecordError {
  readonly sealedHead: number;
  readonly head: number;
  constructor(stream: string, head: number, sealedHead: number) {
    super(stream, head + 1, `records up to ${sealedHead} were stored at the last clean close but the head is now ${head}`);
    this.name = 'StreamCutShortError';
    this.sealedHead = sealedHead;
    this.head = head;
  }
}

/** Reads the watermark; a stream never closed cleanly has `{ head: 0 }`. */
export async function readWatermark(directory: string, stream: string): Promise<Watermark> {
  let text: string;
  try {
    text = await readFile(join(directory, WATERMARK_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { head: 0 };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Watermark;
    if (Number.isSafeInteger(parsed.head) && (parsed.seal === undefined || typeof parsed.seal === 'string')) return parsed;
  } catch (error) {
    throw new CorruptRecordError(stream, undefined, 'the watermark file is not JSON', { cause: error });
  }
  throw new CorruptRecordError(stream, undefined, 'the watermark file has the wrong shape');
}

/** Replaces the watermark atomically and durably (temp file, fsync, rename, fsync of the directory). */
export async function writeWatermark(directory: string, watermark: Watermark): Promise<void> {
  const target = join(directory, WATERMARK_FILE);
  const temporary = `${target}.${process.pid}.tmp`;
  const file = await open(temporary, 'w');
  try {
    await file.writeFile(JSON.stringify(watermark));
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, target);
  const folder = await open(directory, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * What the LevelDB info log of the open that just happened says it dropped (damaged log data), on one line: each
 * report without LevelDB's time and thread columns, naming the log file but not the directory (a reading command's
 * is a throwaway copy that is gone by the time anyone reads the message), joined by ` · `.
 */
export async function recoveryDrops(directory: string): Promise<string | undefined> {
  let log: string;
  try {
    log = await readFile(join(directory, 'LOG'), 'utf8');
  } catch {
    return undefined;
  }
  const drops = log
    .split('\n')
    .filter((line) => /dropping \d+ bytes/.test(line))
    .map((line) => line.replace(/^\d{4}\/\d\d\/\d\d-[\d:.]+ [0-9a-f]+ /, '').replace(/(?:\/[^\s/:]+)*\/(\d+\.log:)/, '$1').trim());
  return drops.length === 0 ? undefined : drops.join(' · ');
}

/** What `checkIntegrity` needs to know about a database it just opened. */
export interface IntegrityCheck {
  directory: string;
  stream: string;
  head: number;
  /** A throwaway copy of another process's database: never write the watermark into it. */
  copy: boolean;
  /** Return a head below the watermark instead of raising `StreamCutShortError` (a chain check of a copy reports it). */
  tolerateCutShort?: boolean;
}

/**
 * Raises `CorruptRecordError` when the just-opened database lost data: its recovery dropped log bytes, an earlier
 * open recorded damage, or its head is below the last clean-close watermark (`StreamCutShortError`). Returns the
 * watermark otherwise.
 */
export async function checkIntegrity(check: IntegrityCheck): Promise<Watermark> {
  const watermark = await readWatermark(check.directory, check.stream);
  if (watermark.damaged !== undefined) {
    throw new CorruptRecordError(check.stream, undefined, `damage found on an earlier open: ${watermark.damaged}`);
  }
  const drops = await recoveryDrops(check.directory);
  if (drops !== undefined) {
    if (!check.copy) await writeWatermark(check.directory, { head: watermark.head, damaged: drops });
    throw new CorruptRecordError(check.stream, undefined, `LevelDB recovery dropped damaged data: ${drops}`);
  }
  if (check.head < watermark.head && !(check.copy && check.tolerateCutShort)) throw new StreamCutShortError(check.stream, check.head, watermark.head);
  return watermark;
}
