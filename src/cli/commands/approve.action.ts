import { ReinError } from '../../host/host-errors.js';
import { openStore, printJson } from '../cli-context.js';
import type { ApproveOptions } from './approve.command.js';

/** The body of `rein approve` (see `registerApprove`). */
export const approveCommand = async (sessionId: string, approvalId: string, options: ApproveOptions): Promise<void> => {
  const store = await openStore(options, process.cwd(), 'read');
  try {
    const { queueOf } = await import('../../worker/submit-session.js');
    const queue = queueOf(store);
    const entry = await queue.entry(sessionId);
    if (!entry) throw new ReinError('SESSION_NOT_FOUND', `${sessionId} is not a queued session (answer a session you run yourself with rein resume --approve)`);
    const records = await store.read(sessionId);
    const asked = records.some((record) => record.type === 'approval.requested' && (record.data as { approvalId?: unknown }).approvalId === approvalId);
    const answered = records.some((record) => record.type === 'approval.replied' && (record.data as { approvalId?: unknown }).approvalId === approvalId);
    if (!asked || answered) throw new ReinError('APPROVAL_NOT_FOUND', `no pending approval ${approvalId} in session ${sessionId}`);
    const reason = options.reason?.trim();
    const decision = options.deny ? 'deny' : 'allow-once';
    const state = await queue.answer(sessionId, { approvalId, decision, ...(reason ? { feedback: reason } : {}) });
    if (options.json) printJson({ sessionId, approvalId, decision, state });
    else process.stdout.write(`${decision} ${approvalId}: session ${sessionId} is ${state === 'queued' ? 'queued for a worker' : state}\n`);
  } finally {
    await store.close();
  }
};
