import { ReinError } from '../../models/rein-error.js';

/** Stable codes of inspector errors; README lists them. */
export type InspectErrorCode = 'INSPECTOR_UNREACHABLE' | 'INSPECTOR_NOT_LOCAL' | 'INSPECTOR_PORT_IN_USE';

/** The Stately inspector could not be reached, or its URL is not on this machine. */
export class InspectError extends ReinError<InspectErrorCode> {
  constructor(code: InspectErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'InspectError';
  }
}
