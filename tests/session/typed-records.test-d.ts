/**
 * Type-level proof that the embedding API hands out records typed by their `type`, as a host app under `strict`
 * uses them (imports only from the public doors). `tsc -p tests` fails if narrowing stops working, or if a field a
 * record type does not have starts to type-check.
 */
import type { Observable } from 'rxjs';
import type { Rein, ReinRecord, ReinSession } from 'rein';
import type { ScriptedRun } from 'rein/testing';

declare const session: ReinSession;
declare const rein: Rein;
declare const run: ScriptedRun;

// Every record-bearing API hands out the same union.
export const streams: Array<Observable<ReinRecord>> = [session.records$, session.records(1), rein.records('s-1', 1)];
export const stored: ReinRecord[] = run.records;

session.records$.subscribe((record) => {
  if (record.type === 'tool.settled') {
    const observation: string = record.data.observation;
    // @ts-expect-error a tool result has no `findings`
    void record.data.findings;
    const exit: number | null | undefined = record.data.execution?.exitCode;
    void [observation, exit];
  }
  if (record.type === 'session.ended') {
    const status: 'completed' | 'failed' | 'cancelled' | 'budget-exhausted' = record.data.status;
    void status;
  }
  if (record.type === 'verification.recorded') {
    // @ts-expect-error a verification has no observation
    void record.data.observation;
  }
});

rein.records('s-1').subscribe((record: ReinRecord) => {
  if (record.type === 'model.responded') for (const call of record.data.toolCalls) void call.arguments;
});

export const firstCommand = run.records.find((record) => record.type === 'verification.recorded');
if (firstCommand?.type === 'verification.recorded') {
  const command: string | undefined = firstCommand.data.command;
  void command;
}
