import { isStreamName } from '../models/envelope-rules.js';
import { StoreError } from './store-errors.js';
import { randomUuid } from './random-uuid.js';

/** Raises `STORE_INVALID_ARGUMENT` unless `stream` is a valid `StreamName` (safe as a directory name). */
export function assertStreamName(stream: unknown): asserts stream is string {
  if (!isStreamName(stream)) {
    throw new StoreError('STORE_INVALID_ARGUMENT', `invalid stream name ${JSON.stringify(stream)}`);
  }
}

/** A fresh, valid name for a fork of `parent` at `atSeq`: `<parent>.fork-<atSeq>-<8 random hex>`. */
export function forkStreamName(parent: string, atSeq: number): string {
  const suffix = `.fork-${atSeq}-${randomUuid().slice(0, 8)}`;
  return `${parent.slice(0, 128 - suffix.length)}${suffix}`;
}
