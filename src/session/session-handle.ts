import type { Observable } from 'rxjs';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { StateValue } from '../../models/actor.records.js';
import type { Usage } from '../../models/budgets.js';
import type { EventStore } from '../../stores/event-store.js';
import type { LiveEvent } from '../host/live-events.js';
import type { SessionHost, SessionResult } from '../host/session-host.js';

/**
 * A running session as a host app or the CLI holds it. Every method goes through the step loop, so whatever it
 * changes is in the log before anything acts on it.
 */
export class ReinSession {
  constructor(
    private readonly host: SessionHost,
    private readonly store: EventStore,
  ) {}

  get id(): string {
    return this.host.stream;
  }

  /** Records as they become durable (live only; use `records(from)` for history too). */
  get records$(): Observable<RecordEnvelope> {
    return this.host.records$.asObservable();
  }

  /** Ephemeral progress: model text deltas, effect start and finish. Never persisted. */
  get live$(): Observable<LiveEvent> {
    return this.host.live$.asObservable();
  }

  /** Every record from `from` on: history first, then live appends, with no gap and no duplicate. */
  records(from = 1): Observable<RecordEnvelope> {
    return this.store.tail(this.id, from);
  }

  /** Send a user message (the task, or a follow-up while the session runs). */
  async send(text: string): Promise<void> {
    await this.host.step({ type: 'user.message', data: { text } });
  }

  /** End the session as `cancelled`; running effects are aborted. */
  cancel(reason = 'cancelled by the user'): Promise<void> {
    return this.host.cancel(reason);
  }

  /** Stop this process's work without ending the session; `resume` continues it later. */
  interrupt(reason = 'interrupted'): Promise<void> {
    return this.host.interrupt(reason);
  }

  /** Resolves when the session ended or waits for someone (approval, confirmation, message). */
  whenQuiet(): Promise<SessionResult> {
    return this.host.whenQuiet();
  }

  /** The result as of now (status `paused` while it is still running or waiting). */
  result(): SessionResult {
    return this.host.result();
  }

  /** The XState persisted snapshot of the whole actor tree (what replay must reproduce). */
  persistedSnapshot(): unknown {
    return this.host.persisted();
  }

  /** The root agent's state value, usage and the stream head. */
  snapshot(): { value: StateValue; usage: Usage; head: number } {
    return this.host.snapshot();
  }
}
