import { rootPath } from '../host/actor-tree.js';
import { listenToRecords, type ReinSession } from './session-handle.js';
import { killStrayProcesses, stopBackgroundCommands, sweepAfterSession } from '../tools/process-runner.js';
import { sessionEndedIn } from '../host/step-record.js';

/**
 * The sessions one harness is running in this process, by id. A session leaves when its root agent ends or the
 * process interrupts it (its log stays in the store; `resumeSession` brings it back); its background commands are
 * stopped then, with every other process carrying the session's marker that no command of this process accounts for
 * (looked for only when such a process can exist: see `sweepAfterSession`).
 */
export class SessionRegistry {
  private readonly running = new Map<string, ReinSession>();

  /**
   * Hold `session` until it ends or is interrupted; returns it for chaining. `createdHere`: this process created the
   * session (no earlier process ran it), so its end looks for stray processes only if this process ran a command for it.
   */
  add(session: ReinSession, options: { createdHere?: boolean } = {}): ReinSession {
    this.running.set(session.id, session);
    const subscription = listenToRecords(session, (record) => {
      const ended = sessionEndedIn(record) !== undefined;
      if (!ended && (record.actor !== rootPath || record.type !== 'session.interrupted')) return;
      if (this.running.get(session.id) === session) this.running.delete(session.id);
      // Background commands live until their hard timeout or the session's end, whichever comes first — those an
      // earlier process of the session left (it was killed before it could stop them) too: found by their marker.
      stopBackgroundCommands(session.id, ended ? 'session-end' : 'interrupted');
      if (sweepAfterSession(session.id, options.createdHere === true)) void killStrayProcesses(session.id);
      queueMicrotask(() => subscription.unsubscribe());
    });
    if (session.result().status !== 'paused') this.running.delete(session.id);
    return session;
  }

  get(sessionId: string): ReinSession | undefined {
    return this.running.get(sessionId);
  }

  list(): ReinSession[] {
    return [...this.running.values()];
  }

  /**
   * Stop every held session's work and wait until all are quiet: a session with anything running is interrupted (its
   * effects aborted, resumable); one that only waits for someone (an approval, a message) is left as it is, recorded
   * as nothing. Resolves with the sessions it held, which it no longer holds (release them once done with them).
   */
  async stopAll(reason: string): Promise<ReinSession[]> {
    const sessions = this.list();
    this.running.clear();
    await Promise.all(sessions.map((session) => (session.waitingForSomeone ? undefined : session.interrupt(reason))));
    await Promise.all(sessions.map((session) => session.whenQuiet().catch(() => undefined)));
    return sessions;
  }
}
