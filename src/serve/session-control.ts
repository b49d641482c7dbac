import { DivergenceError } from '../host/host-errors.js';
import type { Rein } from '../rein.js';
import type { ResumeOptions } from '../session/resume-session.js';
import type { ApprovalAnswer, ReinSession } from '../session/session-handle.js';
import type { ActionResult, ReplayBody } from './api-schemas.js';
import { ServeError } from './serve-errors.js';

/**
 * The actions of the HTTP API over one harness: each goes through the session's own step loop (so what it changes is
 * in the log before anything acts on it). A session this process is not running is resumed here first when an action
 * needs its handle (an approval, a message): it must not be running in another process (`STORE_LOCKED` otherwise).
 * Sessions run on in the background; one that ended lets go of its stream.
 */
export class SessionControl {
  readonly #rein: Rein;
  readonly #onError: (sessionId: string, error: unknown) => void;

  constructor(rein: Rein, onError: (sessionId: string, error: unknown) => void = () => undefined) {
    this.#rein = rein;
    this.#onError = onError;
  }

  async start(task: string): Promise<ActionResult> {
    return this.#result(this.#drive(await this.#rein.startSession({ task })));
  }

  async send(sessionId: string, text: string): Promise<ActionResult> {
    const session = await this.#handle(sessionId);
    await session.send(text);
    return this.#result(this.#drive(session));
  }

  async approve(sessionId: string, approvalId: string, answer: ApprovalAnswer): Promise<ActionResult> {
    const session = await this.#handle(sessionId);
    await session.approve(approvalId, answer);
    return this.#result(this.#drive(session));
  }

  /** Rerun (or decline) an in-doubt effect a resume left waiting for confirmation: the session is resumed with the answer. */
  async confirm(sessionId: string, effectId: string, decision: 'rerun' | 'decline'): Promise<ActionResult> {
    await this.#rein.session(sessionId)?.release();
    return this.resume(sessionId, decision === 'rerun' ? { confirmEffects: [effectId] } : { declineEffects: [effectId] });
  }

  async resume(sessionId: string, options: ResumeOptions = {}): Promise<ActionResult> {
    if (this.#rein.session(sessionId) && options.confirmEffects === undefined && options.declineEffects === undefined) throw new ServeError('SERVE_SESSION_BUSY', `session ${sessionId} is already running in this process`);
    const { session, report } = await this.#rein.resumeSession(sessionId, options);
    if (report.alreadyEnded) await session.release();
    else this.#drive(session);
    return this.#result(session);
  }

  async interrupt(sessionId: string, reason = 'interrupted from the viewer'): Promise<ActionResult> {
    const session = this.#running(sessionId);
    await session.interrupt(reason);
    await session.release();
    return this.#result(session);
  }

  async cancel(sessionId: string, reason = 'cancelled from the viewer'): Promise<ActionResult> {
    const session = await this.#handle(sessionId);
    await session.cancel(reason);
    return this.#result(this.#drive(session));
  }

  async fork(sessionId: string, atSeq: number): Promise<ActionResult> {
    const forked = await this.#rein.forkSession(sessionId, atSeq);
    return { sessionId: forked, status: 'interrupted' };
  }

  async replay(sessionId: string): Promise<ReplayBody> {
    try {
      const counts = await this.#rein.replaySession(sessionId);
      return { sessionId, verified: true, records: counts.head, inputs: counts.inputs, regenerated: counts.regenerated };
    } catch (error) {
      if (error instanceof DivergenceError) return { sessionId, verified: false, divergence: { seq: error.seq, message: error.message } };
      throw error;
    }
  }

  #running(sessionId: string): ReinSession {
    const session = this.#rein.session(sessionId);
    if (!session) throw new ServeError('SERVE_NOT_RUNNING', `session ${sessionId} is not running in this process (resume it first)`);
    return session;
  }

  async #handle(sessionId: string): Promise<ReinSession> {
    const running = this.#rein.session(sessionId);
    if (running) return running;
    const { session, report } = await this.#rein.resumeSession(sessionId);
    if (report.alreadyEnded) {
      await session.release();
      throw new ServeError('SERVE_NOT_RUNNING', `session ${sessionId} has ended (${session.result().status}): fork it to go on`);
    }
    return session;
  }

  /** Let the session run on; once it ended (or was interrupted) its resources and its stream are let go. */
  #drive(session: ReinSession): ReinSession {
    session
      .whenQuiet()
      .then(async (result) => {
        if (result.status !== 'paused') await session.release();
      })
      .catch((error: unknown) => this.#onError(session.id, error));
    return session;
  }

  #result(session: ReinSession): ActionResult {
    return { sessionId: session.id, status: session.result().status };
  }
}
