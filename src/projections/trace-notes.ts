/*
 * The timeline lines of records that belong to no turn: resume, interruption, cancellation, fork, a background
 * command's end, an in-doubt effect's resolution, a rejected snapshot, the model's plan.
 */
import { planLine } from './plan-text.js';

/**
 * How a background command ended, as a person reads it: `exited (exit 1) after 2.0 s`, `stopped at its timeout of
 * 600000 ms (signal SIGTERM) after 600.0 s`, `stopped by rein at the session's end (signal SIGKILL) after 1.1 s`.
 */
export const backgroundEndText = (data: Record<string, unknown>): string => {
  const stoppedBy: Record<string, string> = { 'session-end': "at the session's end", interrupted: 'when the session was interrupted', cancelled: 'when its call was cancelled', paused: 'when rein let go of the paused session' };
  const how = data.ended === 'timeout' ? `stopped at its timeout of ${String(data.timeoutMs)} ms` : data.ended === 'stopped' ? `stopped by rein ${stoppedBy[String(data.stoppedBy)] ?? ''}`.trimEnd() : 'exited';
  const status = data.exitCode === null || data.exitCode === undefined ? `signal ${typeof data.signal === 'string' ? data.signal : 'unknown'}` : `exit ${String(data.exitCode)}`;
  return `${how} (${status}) after ${(Number(data.durationMs) / 1000).toFixed(1)} s`;
};

/** The note text of each record type that gets one, from the record's data. */
export const noteTypes: Record<string, (data: Record<string, unknown>) => string> = {
  'command.ended': (data) => `background command of ${String(data.callId)} ${backgroundEndText(data)}`,
  'session.cancelled': (data) => `cancelled: ${String(data.reason)}`,
  'session.resumed': (data) => `resumed at #${String(data.fromSeq)}${Array.isArray(data.inDoubt) && data.inDoubt.length > 0 ? `; in doubt: ${data.inDoubt.join(', ')}` : ''}${typeof data.strayProcessesKilled === 'number' ? `; killed ${data.strayProcessesKilled} process(es) an earlier run left` : ''}`,
  'session.interrupted': (data) => `interrupted: ${String(data.reason)}`,
  'session.forked': (data) => `forked from ${String(data.parent)} at #${String(data.atSeq)}`,
  'effect.resolved': (data) => `in-doubt ${String(data.effectId)} → ${String(data.resolution)} (${String(data.reason)})`,
  'snapshot.rejected': (data) => `snapshot rejected: ${String(data.reason)}`,
  'plan.updated': planLine,
};
