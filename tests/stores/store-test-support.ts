import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RecordDraft } from '../../models/envelope.js';

/** A valid draft whose id is `r-<index>` and whose data is `{ index }`, with optional overrides. */
export function draft(index: number, overrides: Partial<RecordDraft> = {}): RecordDraft {
  return { id: `r-${index}`, type: 'test.recorded', v: 1, at: 1_700_000_000_000 + index, actor: 'root', data: { index }, ...overrides };
}

/** `count` drafts numbered from `first`. */
export function drafts(first: number, count: number): RecordDraft[] {
  return Array.from({ length: count }, (_, offset) => draft(first + offset));
}

/** Asserts that `operation` rejects with an error carrying `code` (never the message). */
export async function expectCode(operation: Promise<unknown>, code: string): Promise<void> {
  await expect(operation).rejects.toMatchObject({ code });
}

/** A temp directory under os.tmpdir() and its removal. */
export async function temporaryDirectory(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
