import { ReinError } from '../../models/rein-error.js';

/** Stable codes of memory-governance errors; README lists each one. */
export type MemoryErrorCode =
  | 'MEMORY_NOT_FOUND'
  | 'MEMORY_CANDIDATE_CLOSED'
  | 'MEMORY_RECORD_CLOSED'
  | 'MEMORY_NOT_MUTATION_READY'
  | 'MEMORY_CANDIDATE_INVALID'
  | 'MEMORY_PROMOTION_REQUIRED'
  | 'MEMORY_BUSY';

/** A memory-governance error with a stable `code`; nothing was written when one is raised. */
export class MemoryError extends ReinError<MemoryErrorCode> {
  constructor(code: MemoryErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'MemoryError';
  }
}
