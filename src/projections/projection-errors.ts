import { ReinError } from '../../models/rein-error.js';

/** Stable codes of the errors projections and the commands built on them raise; README lists each one. */
export type ProjectionErrorCode = 'PROJECTION_GAP' | 'CONTEXT_NOT_RECORDED' | 'TURN_NOT_FOUND' | 'ACTOR_NOT_FOUND';

/** An error from a projection or a read-only command over one (`code` is stable; tests assert it). */
export class ProjectionError extends ReinError<ProjectionErrorCode> {
  constructor(code: ProjectionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ProjectionError';
  }
}

/** A view was offered a record past an unfilled gap: it never folds a record whose predecessor it has not seen. */
export class ProjectionGapError extends ProjectionError {
  readonly view: string;
  readonly expectedSeq: number;
  readonly receivedSeq: number;
  constructor(view: string, expectedSeq: number, receivedSeq: number) {
    super('PROJECTION_GAP', `the ${view} view expected seq ${expectedSeq} but was offered seq ${receivedSeq}`);
    this.name = 'ProjectionGapError';
    this.view = view;
    this.expectedSeq = expectedSeq;
    this.receivedSeq = receivedSeq;
  }
}
