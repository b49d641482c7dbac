import { ReinError } from '../../host/host-errors.js';
import { statusStateOf } from '../../host/session-status.js';
import { openStore, printJson } from '../cli-context.js';
import { printText } from '../print-text.js';
import type { ApproveOptions } from './approve.flags.js';

/**
 * The body of `rein approve` (see `registerApprove`): `id` is an approval the session waits for, or an in-doubt effect
 * whose rerun its last resume left awaiting confirmation. Anything else — unknown, already answered in the log, or
 * answered already and waiting in the queue — is `APPROVAL_NOT_FOUND`.
 */
export const approveCommand = async (sessionId: string, id: string, options: ApproveOptions): Promise<void> => {
  const store = await openStore(options, process.cwd(), 'read');
  try {
    const { queueOf } = await import('../../worker/submit-session.js');
    // Only a PostgreSQL store queues sessions; a session in any other store is answered by resuming it here.
    const queue = (() => {
      try {
        return queueOf(store);
      } catch (error) {
        if (!(error instanceof ReinError) || error.code !== 'QUEUE_UNSUPPORTED') throw error;
        throw new ReinError('QUEUE_UNSUPPORTED', `rein approve answers sessions queued in a PostgreSQL store, and this store is not one: answer session ${sessionId} by resuming it, rein resume ${sessionId} (it asks on a terminal; --approve '<rule>', --deny '<rule>' or --confirm <effectId> answer without asking)`);
      }
    })();
    const entry = await queue.entry(sessionId);
    if (!entry) throw new ReinError('SESSION_NOT_FOUND', `${sessionId} is not a queued session (answer a session you run yourself with rein resume --approve)`);
    const records = await store.read(sessionId);
    const asked = records.some((record) => record.type === 'approval.requested' && (record.data as { approvalId?: unknown }).approvalId === id);
    const answered = records.some((record) => record.type === 'approval.replied' && (record.data as { approvalId?: unknown }).approvalId === id);
    const confirming = statusStateOf(records).waiting.includes(id);
    if (!(asked && !answered) && !confirming) throw new ReinError('APPROVAL_NOT_FOUND', `no pending approval or confirmation ${id} in session ${sessionId}`);
    const reason = options.reason?.trim();
    const [key, answer, decision] = confirming
      ? ([{ effectId: id }, { effectId: id, decision: options.deny ? 'decline' : 'rerun' }, options.deny ? 'decline' : 'rerun'] as const)
      : ([{ approvalId: id }, { approvalId: id, decision: options.deny ? 'deny' : 'allow-once', ...(reason ? { feedback: reason } : {}) }, options.deny ? 'deny' : 'allow-once'] as const);
    const state = await queue.answer(sessionId, answer, { once: key });
    if (state === 'already-answered') throw new ReinError('APPROVAL_NOT_FOUND', `${id} of session ${sessionId} is already answered: the answer waits in the queue for a worker`);
    if (state === undefined) throw new ReinError('SESSION_NOT_FOUND', `${sessionId} is no longer queued`);
    if (options.json) printJson({ sessionId, ...key, decision, state });
    else printText(`${decision} ${id}: session ${sessionId} is ${state === 'queued' ? 'queued for a worker' : state}\n`);
  } finally {
    await store.close();
  }
};
