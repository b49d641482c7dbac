import type { CommandExecution } from '../../models/tool.records.js';
import type { TraceAction, TraceTurn } from '../projections/trace.view.js';
import type { TraceFinding, TraceReport } from './trace-types.js';
import { patchSummary } from '../tools/patch/patch-paths.js';
import { planLine } from '../projections/plan-text.js';

const clip = (text: string, length = 100): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
};

const argumentsOf = (action: TraceAction): string => {
  if (action.name === 'apply_patch') return clip(patchSummary(action.arguments.input), 60);
  // The model's plan, as a checklist (update_plan's arguments are the whole plan).
  if (action.name === 'update_plan') return clip(planLine(action.arguments), 160);
  for (const key of ['path', 'command', 'pattern']) if (typeof action.arguments[key] === 'string') return clip(String(action.arguments[key]), 60);
  const json = JSON.stringify(action.arguments);
  return json === '{}' ? '' : clip(json, 60);
};

/** How a command ended, as a person reads it: `exit 1, 812 ms`, `SIGKILL, 3 ms`, `timed out (soft), 120000 ms`. */
export const exitText = (execution: CommandExecution): string => {
  const how = execution.timedOut ? `timed out (${execution.timedOut})` : execution.exitCode === null ? (execution.signal ?? 'killed') : `exit ${execution.exitCode}`;
  return `${how}, ${Math.round(execution.durationMs)} ms`;
};

const actionLine = (action: TraceAction): string => {
  const parts = [`${action.name}(${argumentsOf(action)}) #${action.requested.seq}`];
  const hook = (entry: NonNullable<TraceAction['hooks']>[number]) => `${entry.point === 'preToolUse' || entry.point === 'postToolUse' ? `hook ${entry.point}` : entry.point} ${entry.decision}${entry.reason && entry.decision !== 'allow' && entry.decision !== 'pass' ? ` (${clip(entry.reason, 40)})` : ''} #${entry.seq}`;
  const before = (action.hooks ?? []).filter((entry) => entry.point === 'preToolUse' || entry.point === 'guardrail.input');
  const after = (action.hooks ?? []).filter((entry) => entry.point === 'guardrail.output' || entry.point === 'postToolUse');
  parts.push(...before.map(hook));
  const approval = action.approval;
  if (approval?.asked) parts.push(`permission ${approval.asked.decision}${approval.asked.reason ? ` (${clip(approval.asked.reason, 40)})` : ''} #${approval.asked.seq}`);
  if (approval) parts.push(`answered ${approval.answered.decision} #${approval.answered.seq}`);
  parts.push(action.permission ? `permission ${action.permission.decision}${action.permission.reason ? ` (${clip(action.permission.reason, 40)})` : ''} #${action.permission.seq}` : 'permission —');
  if (action.started) parts.push(`started #${action.started.seq}`);
  const settled = action.settled;
  if (settled?.denial) parts.push(action.permission ? `denied #${settled.seq}` : `denied by ${settled.denial.source} (${clip(settled.denial.reason, 60)}) #${settled.seq}`);
  else if (settled) parts.push(`${settled.status === 'ok' ? 'ok' : `error ${settled.errorCode ?? ''}`.trim()}${settled.execution ? ` (${exitText(settled.execution)})` : ''} #${settled.seq}${settled.truncated ? ` (cut, ${settled.truncated.omittedBytes} bytes in ${settled.truncated.artifact})` : ''}`);
  parts.push(...after.map(hook));
  if (action.failed) parts.push(`runtime failure ${action.failed.code} #${action.failed.seq}`);
  if (action.verification) parts.push(`verification ${action.verification.status} #${action.verification.seq}`);
  return parts.join(' → ');
};

/** A `delegate_task` call's children and join, each line naming the child's actor path (its turns carry the same path). */
const delegationLines = (action: TraceAction): string[] => {
  const delegation = action.delegation;
  if (!delegation) return [];
  const lines: string[] = [];
  if (delegation.validated && !delegation.validated.ok) lines.push(`    ↳ refused (${delegation.validated.failureClass ?? 'validation'}) #${delegation.validated.seq}: ${clip(delegation.validated.reason ?? '', 120)}`);
  for (const child of delegation.children) {
    const outcome = child.status === 'completed' ? `completed, report ${child.reportStatus ?? '?'}` : child.status === 'failed' || child.status === 'cancelled' ? `${child.status} (${child.failureClass ?? 'runtime'}: ${clip(child.reason ?? '', 80)})` : child.status;
    lines.push(`    ↳ task ${child.taskId} (${child.role}, ${child.contextMode}) ${child.actor} #${child.started.seq}: ${outcome}${child.ended ? ` #${child.ended.seq}` : ''}${child.escalations > 0 ? ` · ${child.escalations} escalation(s)` : ''}`);
  }
  if (delegation.joined) lines.push(`    ↳ joined (${delegation.joined.policy}) #${delegation.joined.seq}: ${delegation.joined.outcome}${delegation.joined.conflicts > 0 ? `, ${delegation.joined.conflicts} conflict(s)` : ''}`);
  return lines;
};

const turnLines = (turn: TraceTurn): string[] => {
  const context = turn.contexts[turn.contexts.length - 1];
  const head = `turn ${turn.turn}${turn.actor === 'root' ? '' : ` [${turn.actor}]`} #${turn.requested.seq}`;
  const contextText = context ? `context #${context.seq}: ${context.estimatedTokens} tokens, ${context.phase}, ${context.excluded} excluded, ${context.compacted} compacted${turn.contexts.length > 1 ? `, ${turn.contexts.length} attempts` : ''}` : 'context: not recorded';
  const cut = turn.response?.stopReason === 'max_tokens' && turn.response.toolCalls === 0 ? ' (cut at the output token limit: max_tokens)' : '';
  const reply = turn.response ? `model #${turn.response.seq}: "${clip(turn.response.text, 90)}"${cut}` : turn.failure ? `model failed #${turn.failure.seq}: ${turn.failure.code}` : 'model: no reply';
  // Retries and fallbacks: shown only when some attempt failed (a clean first attempt says nothing new).
  const attempts = turn.attempts.some((attempt) => attempt.outcome === 'error')
    ? [`  attempts: ${turn.attempts.map((attempt) => `#${attempt.seq} ${attempt.model ? `${attempt.provider}/${attempt.model}` : attempt.provider} ${attempt.outcome === 'ok' ? 'ok' : `${attempt.errorCode ?? 'error'} → ${attempt.decision}${attempt.fallbackTo ? ` to ${attempt.fallbackTo}` : ''}`}`).join(' · ')}`]
    : [];
  const objection = turn.response?.continuation;
  const stopHook = objection ? [`  stop hook ${objection.by ?? ''}${objection.by ? ': ' : ''}continue — ${clip(objection.reason, 160)}`] : [];
  return [`${head} · ${contextText}`, ...attempts, `  ${reply}`, ...stopHook, ...turn.actions.flatMap((action) => [`  ${actionLine(action)}`, ...delegationLines(action)])];
};

const findingLine = (finding: TraceFinding): string => `[${finding.category} @ ${finding.boundary}] ${finding.type}: ${finding.claim}`;

/** The timeline and findings as plain text lines (what `rein trace` prints). */
export const renderTraceText = (report: TraceReport, users: ReadonlyArray<{ seq: number; text: string }>): string => {
  const lines = [`session ${report.sessionId} · outcome: ${report.outcome}${report.claimedSuccess ? ' (the agent claimed success)' : ''}`, `goal: ${clip(report.task, 160)}`, ''];
  const events = [...users.map((user) => ({ seq: user.seq, lines: [`user #${user.seq}: ${clip(user.text, 120)}`] })), ...report.turns.map((turn) => ({ seq: turn.requested.seq, lines: turnLines(turn) }))].sort((left, right) => left.seq - right.seq);
  const backgroundEnds = (report.backgroundEnds ?? []).map((entry) => ({ seq: entry.seq, lines: [`${entry.text} #${entry.seq}`] }));
  for (const event of [...events, ...backgroundEnds.filter((entry) => !report.ended || entry.seq < report.ended.seq)].sort((left, right) => left.seq - right.seq)) lines.push(...event.lines);
  if (report.ended) lines.push(`ended #${report.ended.seq}: ${report.ended.status}${report.ended.reason ? ` (${report.ended.reason})` : ''}`);
  for (const caveat of report.ended?.caveats ?? []) lines.push(`  left open: ${caveat.kind === 'reply_cut' ? caveat.detail : `the stop hook ${caveat.by ?? ''}${caveat.by ? ' ' : ''}still objected: ${caveat.detail}`}`);
  if (report.ended && 'output' in report.ended) lines.push(`  output: ${clip(JSON.stringify(report.ended.output ?? null), 300)}`);
  if (report.ended?.unresolved) lines.push(`  unresolved fail-closed findings of turn ${report.ended.unresolved.turnId}: ${report.ended.unresolved.findings.map((entry) => entry.class).join(', ')}`);
  // What ended after the session did (its background commands, stopped by its end) follows the end.
  for (const entry of backgroundEnds.filter((entry) => report.ended && entry.seq > report.ended.seq)) lines.push(...entry.lines);
  lines.push('', report.findings.length === 0 ? 'findings: none' : 'findings:');
  for (const finding of report.findings) {
    lines.push(`  ${findingLine(finding)}`, `    evidence: ${finding.evidence.join(' ')} · confidence ${finding.confidence}`, `    repair: ${finding.suggestedFixArea}`);
  }
  if (report.unknowns.length > 0) lines.push('', 'unknowns:', ...report.unknowns.map((unknown) => `  ${unknown}`));
  return `${lines.join('\n')}\n`;
};

/**
 * The Markdown report: Conclusion, Classification, Evidence, Impact, Repair suggestions, Eval candidate, Unknowns,
 * then the timeline (goal → context → model → intent → permission → execution → observation → verification).
 */
export const renderTraceMarkdown = (report: TraceReport, users: ReadonlyArray<{ seq: number; text: string }>): string => {
  const primary = report.primary;
  const out: string[] = [`# Trace report: ${report.sessionId}`, '', `**Goal:** ${clip(report.task, 300)}`, ''];
  out.push('## Conclusion', '', `Outcome: **${report.outcome}**${report.claimedSuccess ? ' — the final message claims success' : ''}.`, '');
  out.push(primary ? `${primary.claim}.` : 'No failure was found by the deterministic rules.', '');
  out.push('## Classification', '');
  if (report.findings.length === 0) out.push('None.', '');
  else {
    out.push('| # | class | boundary | finding | confidence |', '| --- | --- | --- | --- | --- |');
    report.findings.forEach((finding, index) => out.push(`| ${index + 1}${index === 0 ? ' (primary)' : ''} | \`${finding.category}\` | ${finding.boundary} | \`${finding.type}\` | ${finding.confidence} |`));
    out.push('');
  }
  out.push('## Evidence', '');
  for (const finding of report.findings) {
    out.push(`- \`${finding.type}\`: ${finding.evidence.map((ref) => `\`${ref}\``).join(', ')}${finding.fact ? ` — key fact: \`${finding.fact.replace(/`/g, "'")}\`` : ''}${finding.discoveredAt ? ` (discovered at \`${finding.discoveredAt}\`${finding.missingFrom ? `, missing from \`${finding.missingFrom}\`` : ''})` : ''}`);
  }
  if (report.findings.length === 0) out.push('Nothing to cite.');
  out.push('', '## Impact', '');
  out.push(primary ? `The break at the **${primary.boundary}** boundary (#${primary.seq}) ${report.outcome === 'succeeded' ? 'did not change the outcome' : `left the session ${report.outcome}`}.` : `The session is ${report.outcome}.`, '');
  out.push('## Repair suggestions', '');
  for (const category of [...new Set(report.findings.map((finding) => finding.category))]) out.push(`- \`${category}\`: ${report.findings.find((finding) => finding.category === category)!.suggestedFixArea}`);
  if (report.findings.length === 0) out.push('None needed.');
  out.push('', '## Eval candidate', '', report.evalCandidate ? `Yes: \`rein trace ${report.sessionId} --eval\` exports a case that checks the agent's steps.` : 'No.', '');
  out.push('## Unknowns', '');
  const unknowns = [...report.unknowns, ...report.findings.flatMap((finding) => finding.unknowns)];
  out.push(...(unknowns.length > 0 ? unknowns.map((unknown) => `- ${unknown}`) : ['None.']), '');
  out.push('## Timeline', '', '```', renderTraceText(report, users).trimEnd(), '```', '');
  return out.join('\n');
};
