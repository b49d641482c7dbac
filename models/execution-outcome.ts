/**
 * How a command's run is judged, in one place and without zod (`rein show` and the span projection load it): it
 * passed only when it ran to completion and exited 0. Otherwise the failure is `Timeout` (rein's timeout stopped
 * it), `Signal` (a signal ended it) or `NonZeroExit` — the `error.type` an OpenTelemetry span carries.
 */
export interface ExecutionFacts {
  exitCode: number | null;
  signal?: string | undefined;
  timedOut?: string | undefined;
}

export type ExecutionFailure = 'Timeout' | 'Signal' | 'NonZeroExit';

export const executionFailure = (execution: ExecutionFacts): ExecutionFailure | undefined =>
  execution.timedOut !== undefined ? 'Timeout' : execution.signal !== undefined || execution.exitCode === null ? 'Signal' : execution.exitCode !== 0 ? 'NonZeroExit' : undefined;
