import { ReinError } from '../../models/rein-error.js';

/** The base class of every error rein throws (each with a stable `code`); the runtime throws it with a `HostErrorCode`. */
export { ReinError };

/** Stable codes of errors the runtime raises; README lists each one. */
export type HostErrorCode =
  | 'REPLAY_DIVERGENCE'
  | 'MACHINE_ERROR'
  | 'SESSION_NOT_FOUND'
  | 'SESSION_INVALID'
  | 'SESSION_ENDED'
  | 'SCRIPT_INVALID'
  | 'CONFIG_INVALID'
  | 'INPUT_INVALID'
  | 'RESUME_BLOCKED'
  | 'FORK_NOT_AT_BOUNDARY'
  | 'APPROVAL_NOT_FOUND'
  | 'LEASE_LOST'
  | 'SESSION_LEASED'
  | 'QUEUE_UNSUPPORTED'
  | 'STORE_NOT_FOUND'
  | 'STORE_COPY_INCOMPLETE'
  | 'OUTPUT_SCHEMA_INVALID'
  | 'OUTPUT_INVALID'
  | 'HARNESS_CLOSED'
  | 'LAUNCHER_UNRESOLVED'
  | 'REWIND_CONFLICT'
  | 'REWIND_BUSY'
  | 'USAGE'
  | 'COST_BUDGET_REACHED'
  | 'PRICE_UNKNOWN'
  | 'BUDGET_NOT_RAISED';

/** Replay regenerated records that differ from the stored ones: the first differing seq is named. */
export class DivergenceError extends ReinError<'REPLAY_DIVERGENCE'> {
  readonly stream: string;
  readonly seq: number;
  readonly expected: unknown;
  readonly actual: unknown;
  constructor(options: { stream: string; seq: number; expected: unknown; actual: unknown; detail: string }) {
    super('REPLAY_DIVERGENCE', `replay of ${options.stream} diverged at seq ${options.seq}: ${options.detail}`);
    this.name = 'DivergenceError';
    this.stream = options.stream;
    this.seq = options.seq;
    this.expected = options.expected;
    this.actual = options.actual;
  }
}

/**
 * A session with an output schema ended without a valid final answer: every answer the model gave failed validation
 * (`errors` are the last one's), or the session ended otherwise (failed, cancelled, out of budget) before one.
 */
export class OutputError extends ReinError<'OUTPUT_INVALID'> {
  readonly errors: readonly string[];
  readonly status: string;
  constructor(options: { message: string; errors: readonly string[]; status: string }) {
    super('OUTPUT_INVALID', options.message);
    this.name = 'OutputError';
    this.errors = options.errors;
    this.status = options.status;
  }
}
