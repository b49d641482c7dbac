import { terminalText } from '../util/terminal-text.js';
import { createInterface } from 'node:readline/promises';
import { resolve } from 'node:path';
import type { PermissionPolicy, PermissionSubject } from '../policy/permission-policy.js';
import { shellSubject } from '../policy/shell-subject.js';
import type { ApprovalAnswer, ApprovalRequest, ReinSession } from '../session/session-handle.js';
import type { AnyToolDefinition } from '../tools/tool.js';

/** How a prompt ended without an answer: Ctrl-C or a signal (`interrupted`), or Ctrl-D (`end-of-input`). */
export type PromptCutOff = 'interrupted' | 'end-of-input';

/** How the CLI answers approval requests: rules given in advance, and (on a TTY) a person at the keyboard. */
export interface ApprovalAnswering {
  policy: PermissionPolicy;
  tools: readonly AnyToolDefinition[];
  /** Prompt on the terminal for requests no advance answer covers. */
  interactive: boolean;
  /** The session's workspace: a pending shell line of several parts is judged part by part there, as the run would. */
  workspace?: string;
}

/** An answer given in advance (`--yes`, `--approve <rule>`) for a request that was pending before those flags existed. */
export const answeredInAdvance = (answering: ApprovalAnswering, request: ApprovalRequest): ApprovalAnswer | undefined => {
  // An MCP or a plugin tool is not among the CLI's tools: judge it as the most careful reading of its annotations
  // (destructive, not read-only), with the risk the request names for a plugin's.
  const careful = { readOnly: false, destructive: true, idempotent: false, openWorld: true, requiresConfirmation: true };
  const pluginRisk = (['read', 'write', 'execute', 'network'] as const).find((risk) => risk === request.risk) ?? 'execute';
  const tool =
    answering.tools.find((candidate) => candidate.name === request.tool) ??
    (request.tool.startsWith('mcp__') ? { name: request.tool, risk: 'network' as const, annotations: careful } : request.tool.includes('__') ? { name: request.tool, risk: pluginRisk, annotations: careful } : undefined);
  if (!tool) return undefined;
  const recorded: PermissionSubject = { ...(request.target === undefined ? {} : { target: request.target }), ...(request.classes ? { classes: request.classes } : {}) };
  const verdict = answering.policy.decide({ tool, subject: partsOf(answering, request, recorded) });
  return verdict.decision === 'allow' ? { decision: 'allow-once' } : undefined;
};

/**
 * A pending shell line of several parts with its parts, judged again in the workspace — used only when that judgement
 * classes the line as the recorded request did (protected paths, which this process does not know, would differ).
 */
const partsOf = (answering: ApprovalAnswering, request: ApprovalRequest, recorded: PermissionSubject): PermissionSubject => {
  const args = request.arguments as { command?: unknown; cwd?: unknown } | undefined;
  if (request.tool !== 'bash' || answering.workspace === undefined || typeof args?.command !== 'string' || !request.classes?.includes('chained')) return recorded;
  const fresh = shellSubject(args.command, { workspace: answering.workspace, cwd: resolve(answering.workspace, typeof args.cwd === 'string' ? args.cwd : '.') });
  const same = fresh.classes !== undefined && fresh.classes.join(' ') === [...request.classes].sort().join(' ');
  return same ? { ...fresh, ...recorded } : recorded;
};

// Every field can carry model text (the command, a path): shown with its control characters escaped, on one line.
const describeRequest = (request: ApprovalRequest): string =>
  [`\napproval needed (${request.approvalId})${request.actor && request.actor !== 'root' ? ` for child agent ${terminalText(request.actor)}` : ''}: ${terminalText(request.summary)}`, `  risk:   ${terminalText(request.risk)}`, `  reason: ${terminalText(request.reason)}`, ...(request.suggestedRule ? [`  [s] allows "${terminalText(request.suggestedRule)}" for the rest of the session`] : [])].join('\n');

/**
 * Ask a person on the terminal: `y` allow once, `s` allow for the session, `n` deny, or any other text to deny with
 * that text as feedback for the model. The prompt goes to stderr so stdout stays the session's output.
 */
export const promptForApproval = async (request: ApprovalRequest, streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }, cutOff?: AbortSignal): Promise<ApprovalAnswer | PromptCutOff> => {
  if (cutOff?.aborted) return 'interrupted';
  const handle = streams.input as NodeJS.ReadableStream & { ref?: () => void; unref?: () => void };
  handle.ref?.();
  // `TERM=dumb` understands no escape sequences: no line editing there (Ctrl-C then reaches the process as SIGINT).
  const lines = createInterface({ input: streams.input, output: streams.output, terminal: process.env.TERM !== 'dumb' });
  // In raw mode Ctrl-C reaches readline, not the process: without a listener readline would close and the pending
  // question would reject with ABORT_ERR. It means "interrupt", as it does everywhere else in the CLI — and so does a
  // signal sent to the process while the question waits (`cutOff`: SIGINT, SIGTERM, the output gone).
  const interrupt = new AbortController();
  lines.on('SIGINT', () => interrupt.abort());
  const onCutOff = () => interrupt.abort();
  cutOff?.addEventListener('abort', onCutOff);
  try {
    streams.output.write(`${describeRequest(request)}\n`);
    for (;;) {
      // Ctrl-D (end of input) closes the prompt: nobody is left to answer, which cuts the run off like Ctrl-C.
      const reply = await lines.question('allow? [y]es once / [s]ession / [n]o / or type why not: ', { signal: interrupt.signal }).then(
        (text) => text.trim(),
        (): PromptCutOff => (interrupt.signal.aborted ? 'interrupted' : 'end-of-input'),
      );
      if (reply === 'interrupted' || reply === 'end-of-input') {
        streams.output.write('\n');
        return reply;
      }
      if (/^(y|yes)$/i.test(reply)) return { decision: 'allow-once' };
      if (/^(s|session)$/i.test(reply)) return { decision: 'allow-session' };
      if (/^(n|no)$/i.test(reply)) return { decision: 'deny' };
      if (reply.length > 1) return { decision: 'deny', feedback: reply };
    }
  } finally {
    cutOff?.removeEventListener('abort', onCutOff);
    lines.close();
    // A terminal left referenced would keep the process alive after the session ends.
    handle.pause();
    handle.unref?.();
  }
};

/**
 * Answer every pending request the session is waiting on: in advance where a rule or `--yes` covers it, otherwise
 * by prompting when interactive. Returns how many were answered (0 means the session stays paused), or how the prompt
 * was cut off (that question stays pending): `interrupted` (Ctrl-C there, or `cutOff` aborted), `end-of-input` (Ctrl-D).
 */
export const answerPending = async (session: ReinSession, answering: ApprovalAnswering, cutOff?: AbortSignal): Promise<number | PromptCutOff> => {
  let answered = 0;
  for (const request of session.pendingApprovals()) {
    const answer = answeredInAdvance(answering, request) ?? (answering.interactive ? await promptForApproval(request, { input: process.stdin, output: process.stderr }, cutOff) : undefined);
    if (answer === 'interrupted' || answer === 'end-of-input') return answer;
    if (!answer) continue;
    await session.approve(request.approvalId, answer);
    answered++;
  }
  return answered;
};
