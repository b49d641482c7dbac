/**
 * The base class of every error rein throws across a boundary: a stable `code` (docs/errors.md: *Error codes*; tests assert it,
 * never the message) and the underlying `cause` when there is one. Each layer narrows `code` to its own codes
 * (`StoreError`, `McpError`, `PluginError`, …); `error instanceof ReinError` catches them all.
 */
export class ReinError<Code extends string = string> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReinError';
    this.code = code;
  }
}
