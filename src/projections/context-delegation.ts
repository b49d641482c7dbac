import type { ActorContext, ChildTask, ConversationItem } from './context.view.js';
import { quoteUntrusted } from './context-render.js';
import { callSummary } from './call-summary.js';

const BRIEF_LINES = 12;

const clip = (text: string, length: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
};

const stepLine = (item: ConversationItem): string => {
  if (item.kind === 'user') return `#${item.seq} user: "${clip(item.text, 100)}"`;
  const calls = item.toolCalls.map((call) => callSummary(call, item.results.find((candidate) => candidate.callId === call.callId)));
  return `#${item.seq} turn ${item.turn}: ${item.text ? `"${clip(item.text, 80)}"` : '(no text)'}${calls.length > 0 ? ` → ${calls.join(', ')}` : ''}`;
};

/**
 * The parent's log folded into a short brief for a `summary` child: what the parent was asked, what it changed and
 * verified, which files it read (paths only, never their content) and its latest steps as one line each. Built
 * from the parent's context view as it was when the child started (itself a projection of the log), never from the
 * parent's messages.
 */
export const parentBrief = (parent: ActorContext, goal: string | undefined): string => {
  const lines: string[] = [];
  if (goal !== undefined) lines.push(`the parent's goal: "${clip(goal, 300)}"`);
  lines.push(`the parent's model turns so far: ${parent.turns}`);
  if (parent.modified.length > 0) lines.push(`files the parent changed: ${parent.modified.map((entry) => `${entry.path} (#${entry.seq})`).join(', ')}`);
  if (parent.reads.length > 0) lines.push(`files the parent read: ${parent.reads.map((read) => `${read.path} (#${read.seq})`).join(', ')}`);
  lines.push(parent.verification ? `the parent's last verification: ${parent.verification.status} — ${parent.verification.name} (#${parent.verification.seq})` : 'the parent has no verification yet');
  const steps = parent.recent.slice(-BRIEF_LINES).map(stepLine);
  if (steps.length > 0) lines.push('its latest steps:', ...steps.map((line) => `  ${line}`));
  return quoteUntrusted(lines.join('\n'));
};

/** The task block a child agent's system message carries: who it is, what to do, within what, and how to end. */
export const renderTaskBlock = (delegated: ChildTask): string => {
  const { task } = delegated;
  const scope = Object.entries(task.scope)
    .filter(([, values]) => values.length > 0)
    .map(([kind, values]) => `${kind}: ${values.map((value) => quoteUntrusted(value)).join(', ')}`);
  return [
    `<task trust="trusted" ref="#${delegated.seq}" id="${task.taskId}" role="${task.role}" depth="${task.depth}">`,
    `You are a ${task.role} child agent working for ${delegated.parent}. Work only on this task and stay in its scope; you cannot approve your own escalations — an approval you need goes to the user while you wait.`,
    `title: ${quoteUntrusted(task.title)}`,
    `objective: ${quoteUntrusted(task.objective)}`,
    `scope: ${scope.length > 0 ? scope.join('; ') : 'the workspace'}`,
    `tools: ${[...task.tools, 'submit_report'].join(', ')} (permission mode ${task.permissionMode})`,
    `budgets: ${task.budgets.maxTurns} turns, ${task.budgets.maxToolCalls} tool calls, ${task.budgets.maxTokens} tokens, ${Math.round(task.budgets.maxWallTimeMs / 1000)} s`,
    `End ONLY by calling submit_report with a ${task.contract.format} (required: ${task.contract.requiredFields.join(', ')}). A reply without it, or a report that breaks the contract, gets one correction round and then fails. Report honestly: partial, blocked, unknown or out_of_scope when that is the truth; finding nothing is never proof that nothing is there.`,
    '</task>',
  ].join('\n');
};
