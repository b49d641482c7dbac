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
  | 'LAUNCHER_UNRESOLVED'
  | 'USAGE';

/** Base class for runtime errors that cross a boundary: a stable `code` and the underlying `cause`. */
export class ReinError extends Error {
  readonly code: HostErrorCode;
  constructor(code: HostErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReinError';
    this.code = code;
  }
}

/** Replay regenerated records that differ from the stored ones: the first differing seq is named. */
export class DivergenceError extends ReinError {
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
export class OutputError extends ReinError {
  readonly errors: readonly string[];
  readonly status: string;
  constructor(options: { message: string; errors: readonly string[]; status: string }) {
    super('OUTPUT_INVALID', options.message);
    this.name = 'OutputError';
    this.errors = options.errors;
    this.status = options.status;
  }
}
