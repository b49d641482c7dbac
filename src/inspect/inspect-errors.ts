/** Stable codes of inspector errors; README lists them. */
export type InspectErrorCode = 'INSPECTOR_UNREACHABLE' | 'INSPECTOR_NOT_LOCAL' | 'INSPECTOR_PORT_IN_USE';

/** The Stately inspector could not be reached, or its URL is not on this machine. */
export class InspectError extends Error {
  readonly code: InspectErrorCode;
  constructor(code: InspectErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InspectError';
    this.code = code;
  }
}
