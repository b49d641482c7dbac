import { ReinError } from '../../models/rein-error.js';

/** Stable codes of the errors `rein serve` and `createReinServer` answer with; README lists each one. */
export type ServeErrorCode =
  | 'SERVE_UNAUTHORIZED'
  | 'SERVE_FORBIDDEN'
  | 'SERVE_READ_ONLY'
  | 'SERVE_NOT_FOUND'
  | 'SERVE_METHOD_NOT_ALLOWED'
  | 'SERVE_BAD_REQUEST'
  | 'SERVE_SESSION_BUSY'
  | 'SERVE_NOT_RUNNING'
  | 'SERVE_ASSETS_MISSING';

/** The HTTP status each code is answered with. */
export const serveErrorStatus: Record<ServeErrorCode, number> = {
  SERVE_UNAUTHORIZED: 401,
  SERVE_FORBIDDEN: 403,
  SERVE_READ_ONLY: 403,
  SERVE_NOT_FOUND: 404,
  SERVE_METHOD_NOT_ALLOWED: 405,
  SERVE_BAD_REQUEST: 400,
  SERVE_SESSION_BUSY: 409,
  SERVE_NOT_RUNNING: 409,
  SERVE_ASSETS_MISSING: 500,
};

/** An error of the HTTP layer: a stable `code`, answered as `{ error: { code, message } }` with its status. */
export class ServeError extends ReinError<ServeErrorCode> {
  constructor(code: ServeErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ServeError';
  }
}

/** Codes of other layers and the status they are answered with (anything else is a 500). */
const statusOfCode: Record<string, number> = {
  SESSION_NOT_FOUND: 404,
  APPROVAL_NOT_FOUND: 404,
  STORE_STREAM_NOT_FOUND: 404,
  BLOB_NOT_FOUND: 404,
  TURN_NOT_FOUND: 404,
  ACTOR_NOT_FOUND: 404,
  CONTEXT_NOT_RECORDED: 404,
  INPUT_INVALID: 400,
  SESSION_INVALID: 400,
  USAGE: 400,
  FORK_NOT_AT_BOUNDARY: 400,
  STORE_INVALID_ARGUMENT: 400,
  SESSION_ENDED: 409,
  STORE_LOCKED: 409,
  RESUME_BLOCKED: 409,
  STORE_CONFLICT: 409,
  PROMPT_BLOCKED: 409,
  SESSION_LEASED: 409,
  REWIND_CONFLICT: 409,
  REWIND_BUSY: 409,
  CHAIN_BROKEN: 409,
  CHAIN_UNAUTHENTICATED: 409,
  HARNESS_CLOSED: 503,
  STORE_READ_ONLY: 403,
};

/** The HTTP status and body of any error a route raised. */
export const errorAnswer = (error: unknown): { status: number; code: string; message: string } => {
  if (error instanceof ServeError) return { status: serveErrorStatus[error.code], code: error.code, message: error.message };
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'INTERNAL';
  const message = error instanceof Error ? error.message : String(error);
  return { status: statusOfCode[code] ?? 500, code, message };
};
