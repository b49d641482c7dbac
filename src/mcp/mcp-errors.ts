import { ReinError } from '../../models/rein-error.js';

/** Stable codes of the MCP commands' errors (docs/errors.md: *Error codes*). */
export type McpErrorCode = 'MCP_SERVER_NOT_FOUND' | 'MCP_UNTRUSTED' | 'MCP_CONNECT_FAILED';

/** An MCP command could not do what was asked: no such server, a project file not trusted, a server that did not come up. */
export class McpError extends ReinError<McpErrorCode> {
  constructor(code: McpErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'McpError';
  }
}
