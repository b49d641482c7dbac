import type { WorkspaceChanged } from '../../models/workspace.records.js';
import { changesLine, fileChangesOf } from '../changes/file-change.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ToolSettled } from '../../models/tool.records.js';
import { executionFailure } from '../../models/execution-outcome.js';
import type { SandboxChecked } from '../../models/sandbox.records.js';
import { sandboxLine } from '../policy/sandbox-status.js';
import type { PluginFailed } from '../../models/plugin.records.js';
import { backgroundEndText } from '../projections/trace-notes.js';
import { patchSummary } from '../tools/patch/patch-paths.js';
import { planLine } from '../projections/plan-text.js';
import { terminalSafe } from '../util/terminal-text.js';

const clip = (text: string, length = 100): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
};

/**
 * A record made safe to print as a transcript line (`terminalSafe`: every control character escaped). A call's plain
 * result is shown on one line, so its line breaks become spaces first — escaped, they printed as a literal `\n`
 * (`✓ edit: edited src/add.js: replaced one occurrence\n1 30036e31 | …`). A command's JSON result has none outside
 * its strings, and its output is still shown line by line.
 */
export const transcriptSafe = (record: RecordEnvelope): RecordEnvelope => {
  const data = record.data as { observation?: unknown } | undefined;
  if (record.type !== 'tool.settled' || typeof data?.observation !== 'string') return terminalSafe(record);
  return terminalSafe({ ...record, data: { ...data, observation: data.observation.replace(/[\r\n]+/g, ' ') } });
};

/** A short, readable summary of a tool call's arguments (`path`, `command` or the first few fields). */
export const summarizeArguments = (args: Record<string, unknown>): string => {
  if (typeof args.input === 'string' && args.input.includes('*** Begin Patch')) return clip(patchSummary(args.input), 80);
  for (const key of ['path', 'command', 'pattern', 'query']) if (typeof args[key] === 'string') return clip(String(args[key]), 80);
  return clip(JSON.stringify(args), 80);
};

/**
 * How a settled tool call reads to a person: `denied` (a rule, the mode, a person or the sandbox refused it: it never
 * ran), `failed` (an error, or a command that ran and did not exit 0), `background` (a command left running: its
 * outcome is unknown, so it is neither passed nor failed) or `passed`.
 */
export type CallVerdict = 'passed' | 'failed' | 'denied' | 'background';

export const callVerdict = (settled: Pick<ToolSettled, 'status' | 'errorCode' | 'denial' | 'execution' | 'observation'>): CallVerdict => {
  if (settled.denial !== undefined || settled.errorCode === 'Denied') return 'denied';
  // `executionFailure` is zod-free: `rein show` loads this file and must not load zod.
  const execution = settled.execution;
  if (settled.status === 'error' || (execution !== undefined && executionFailure(execution) !== undefined)) return 'failed';
  if (execution === undefined && /"background":\s*true/.test(settled.observation)) return 'background';
  return 'passed';
};

/** Why a verification's status is not its exit's, as a few words after the exit code (from its summary's first line). */
const verificationCaveat = (data: { status: string; exitCode?: number | null; summary?: string }): string => {
  const first = String(data.summary ?? '').split('\n')[0] ?? '';
  if (data.status === 'failed' && data.exitCode === 0) return `, ${/counts (\d+) failed/.exec(first)?.[1] ?? 'some'} failed by the runner's own summary`;
  if (data.status !== 'inconclusive') return '';
  if (first.startsWith('its output shows no runner summary')) return ', no count of tests that ran';
  if (first.startsWith('the package.json script')) return `, its package script does not report a test suite's exit`;
  return ', no test ran';
};

/** The mark a verdict shows with: ✓ passed, ✗ failed or denied, … still running (outcome unknown). */
export const verdictMark = (verdict: CallVerdict): string => (verdict === 'passed' ? '✓' : verdict === 'background' ? '…' : '✗');

/** `1 tool call`, `3 tool calls`. */
export const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** The root agent's tool calls in a whole log, by verdict: the run summary counts from here, not from one process. */
export const callTally = (records: Iterable<RecordEnvelope>): Record<CallVerdict, number> => {
  const tally: Record<CallVerdict, number> = { passed: 0, failed: 0, denied: 0, background: 0 };
  for (const record of records) if (record.type === 'tool.settled' && record.actor === 'root') tally[callVerdict(record.data as ToolSettled)]++;
  return tally;
};

/** How many calls a tally holds (every verdict). */
export const settledCount = (tally: Record<CallVerdict, number>): number => tally.passed + tally.failed + tally.denied + tally.background;

/** A rule that guards nothing, as a person reads it: `deny rule mcp__x__get_env matches no tool of this session (did you mean …?)`. */
export const unmatchedRuleText = (data: { rule: string; suggestion?: string }): string => {
  const [action, ...subject] = data.rule.split(' ');
  return `${action} rule ${subject.join(' ')} matches no tool of this session${data.suggestion ? ` (did you mean ${data.suggestion}?)` : ''}`;
};

/** How a command ended, in a transcript: `exit 1, 812 ms`. */
/** How many lines (and characters) of a command's output `rein show` prints; `--json` has all of it. */
const outputLines = 40;
const outputChars = 4000;

/**
 * A command's output as `rein show` prints it, from the JSON a shell call observes (`stdout`, `stderr`): each line
 * indented under the call (`  │ …`, stderr's `  ! …`), the first 40 lines and 4,000 characters, then how much more
 * there is. Undefined when the observation is not such JSON (then the plain observation is shown).
 */
const commandOutput = (observation: string): string | undefined => {
  let parsed: { stdout?: unknown; stderr?: unknown };
  try {
    parsed = JSON.parse(observation) as { stdout?: unknown; stderr?: unknown };
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || (typeof parsed.stdout !== 'string' && typeof parsed.stderr !== 'string')) return undefined;
  const lines = [...linesOf(parsed.stdout).map((line) => `  │ ${line}`), ...linesOf(parsed.stderr).map((line) => `  ! ${line}`)];
  if (lines.length === 0) return ' (no output)';
  const shown: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (shown.length === outputLines || chars + line.length > outputChars) break;
    shown.push(line);
    chars += line.length;
  }
  const more = lines.length - shown.length;
  return `\n${shown.join('\n')}${more > 0 ? `\n  … ${more} more line(s) (rein show --json has them all)` : ''}`;
};

const linesOf = (text: unknown): string[] => (typeof text === 'string' && text !== '' ? text.replace(/\n$/, '').split('\n') : []);

const ran = (execution: { exitCode: number | null; signal?: string; timedOut?: string; durationMs: number } | undefined): string =>
  execution ? ` (${execution.timedOut ? `timed out (${execution.timedOut})` : execution.exitCode === null ? (execution.signal ?? 'killed') : `exit ${execution.exitCode}`}, ${Math.round(execution.durationMs)} ms)` : '';

/**
 * A plugin that was refused or failed, as a person reads it: `✗ plugin unreadable#1 (cli) failed at manifest:
 * PLUGIN_NOT_FOUND: …`; the session goes on without it.
 */
export const pluginFailedLine = (data: Pick<PluginFailed, 'pluginId' | 'source' | 'phase' | 'code' | 'message'>): string => {
  const message = data.message.startsWith(`${data.code}: `) ? data.message.slice(data.code.length + 2) : data.message;
  return `✗ plugin ${data.pluginId} (${data.source}) failed at ${data.phase}: ${data.code}: ${message}`;
};

/** The typestate's witness records: shown with `--verbose` (and always in `--json`), not in the plain transcript. */
const witnessTypes = new Set(['turn.call-spec', 'turn.requests', 'turn.results', 'turn.uses', 'turn.join-closed', 'turn.mutation-ready']);

/** Who changed the workspace, as `rein show` says it. */
const workspaceChangedTitle = (data: WorkspaceChanged): string =>
  data.source === 'call' ? `files changed by ${data.tool ?? 'a call'} ${data.callId ?? data.effectId ?? ''}`.trimEnd() : data.source === 'outside' ? `files changed outside rein${data.inDoubt ? ` (or by the interrupted call ${data.inDoubt.join(', ')})` : ''}` : data.source === 'rewind' ? `workspace rewound to #${data.toSeq}` : 'files changed between calls';

/**
 * One transcript line per record that matters to a person reading the session — messages, tool calls with their
 * results, approvals, verifications, child agents, the end — and, with `verbose`, the typestate's witnesses; other
 * records return undefined. A blocked turn is always shown (it changes what the session's end means).
 */
export const transcriptLine = (record: RecordEnvelope, options: { verbose?: boolean } = {}): string | undefined => {
  if (witnessTypes.has(record.type) && !options.verbose) return undefined;
  const data = record.data as Record<string, any>;
  const who = record.actor === 'root' ? '' : `[${record.actor}] `;
  const at = `#${record.seq}`.padEnd(6);
  switch (record.type) {
    case 'session.created':
      return `${at}${who}session ${record.stream} in ${data.workspace} (provider ${data.provider.name})`;
    case 'sandbox.checked':
      return `${at}${who}${sandboxLine(data as SandboxChecked)}`;
    case 'network.decided':
      return `${at}${who}network: ${data.decision === 'allow' ? 'allowed' : 'refused'} ${data.method} ${data.host}:${data.port} (${data.reason})`;
    case 'memory.unavailable':
      return `${at}${who}memory unavailable: ${data.code} ${data.message} (the session ran on without memory)`;
    case 'command.ended':
      return `${at}${who}background command of ${data.callId} ${backgroundEndText(data)}`;
    case 'permission.rule-unmatched':
      return `${at}${who}! ${unmatchedRuleText(data as { rule: string; suggestion?: string })}`;
    case 'plan.updated':
      return `${at}${who}${planLine(data)}`;
    case 'workspace.cleaned':
      return `${at}${who}removed ${(data.paths as string[]).join(', ')} (${data.reason === 'interrupted-write' ? 'temp files of an interrupted write' : 'protected paths a command created'})`;
    case 'workspace.captured':
      return `${at}${who}workspace captured: ${data.files} file${data.files === 1 ? '' : 's'}, ${data.dirs} folder${data.dirs === 1 ? '' : 's'}${data.symlinks > 0 ? `, ${data.symlinks} link${data.symlinks === 1 ? '' : 's'}` : ''} (tree ${String(data.tree).slice(0, 12)})`;
    case 'workspace.changed':
      return `${at}${who}${workspaceChangedTitle(data as WorkspaceChanged)}: ${data.changes.length === 0 ? 'nothing' : changesLine(fileChangesOf(data.changes as WorkspaceChanged['changes']))}`;
    case 'workspace.rewind-started':
      return `${at}${who}rewind of the workspace to #${data.toSeq} started: ${data.paths} path${data.paths === 1 ? '' : 's'}${data.overwritten ? ` (overwriting changes made outside rein: ${(data.overwritten as string[]).join(', ')})` : ''}`;
    case 'user.message':
      return `${at}${who}user: ${clip(data.text, 200)}`;
    case 'model.responded': {
      const calls = (data.toolCalls as Array<{ name: string; arguments: Record<string, unknown> }>).map((call) => `${call.name}(${summarizeArguments(call.arguments)})`);
      const text = `${data.reasoning ? `reasoning: ${clip(data.reasoning, options.verbose ? 2000 : 200)}\n${' '.repeat(6)}${who}` : ''}${data.text ? `assistant: ${clip(data.text, 200)}` : 'assistant:'}`;
      const cut = data.stopReason === 'max_tokens' && calls.length === 0 ? ' [cut at the output token limit: max_tokens]' : data.stopReason === 'unknown' ? ` [stopped for a reason rein does not know: ${clip(String(data.rawStopReason ?? '?'), 60)}]` : '';
      return `${at}${who}${text}${calls.length > 0 ? ` → ${calls.join(', ')}` : ''}${cut}`;
    }
    case 'hook.decided':
      // A message a userPromptSubmit hook refused: it never reached the model.
      if (data.point === 'userPromptSubmit' && data.decision === 'block') return `${at}${who}prompt blocked by ${data.decidedBy ?? 'a userPromptSubmit hook'}${data.reason ? ` — ${clip(data.reason, 160)}` : ''} (the message was not sent)`;
      // A stop hook's verdict on a final reply: why the next answer came (continue), or why the session stopped.
      if (data.point !== 'stop' || (data.decision !== 'continue' && data.decision !== 'stop')) return undefined;
      return `${at}${who}stop hook ${data.decidedBy ?? ''}${data.decidedBy ? ': ' : ''}${data.decision}${data.reason ? ` — ${clip(data.reason, 160)}` : ''}`;
    case 'model.failed':
      return `${at}${who}model failed: ${data.error.code}: ${clip(data.error.message)}`;
    case 'model.attempted':
      if (data.outcome === 'ok') return undefined;
      return `${at}${who}model attempt ${data.attempt} (${data.provider}${data.model ? ` ${data.model}` : ''}) failed: ${data.errorCode} → ${data.decision}${data.decision === 'retry' ? ` in ${((data.delayMs ?? 0) / 1000).toFixed(1)} s` : ''}${data.decision === 'fallback' && data.fallbackTo ? ` to ${data.fallbackTo.provider}${data.fallbackTo.model ? ` ${data.fallbackTo.model}` : ''}` : ''}`;
    case 'tool.settled': {
      const verdict = callVerdict(data as ToolSettled);
      // The observation of a failure starts with its code (`Denied: read: ../x is outside…`), which the line already
      // names: the code is printed once.
      const observation = data.errorCode && String(data.observation).startsWith(`${data.errorCode}: `) ? String(data.observation).slice(data.errorCode.length + 2) : data.observation;
      const head = `${at}${who}${verdictMark(verdict)} ${data.name}${data.errorCode ? ` ${data.errorCode}` : ''}${ran(data.execution)}${data.denial ? ` (denied by ${data.denial.source})` : ''}${verdict === 'background' ? ' (left running in the background: outcome unknown)' : ''}`;
      // A command's result is its output, shown as the lines it printed, not its JSON envelope cut short.
      const output = data.execution ? commandOutput(String(observation)) : undefined;
      return output === undefined ? `${head}: ${clip(observation)}` : `${head}: ${clip(data.execution.command, 100)}${output}`;
    }
    case 'plugin.failed':
      return `${at}${who}${pluginFailedLine(data as PluginFailed)}`;
    case 'verification.recorded':
      return `${at}${who}verification ${data.status}: ${clip(data.command ?? data.name, 80)}${data.exitCode !== undefined ? ` (exit ${String(data.exitCode)}${verificationCaveat(data as { status: string; exitCode?: number | null; summary?: string })})` : ''}`;
    case 'delegation.started':
      return `${at}${who}↳ task ${data.taskId} (${data.task.role}) started as ${data.child}: ${clip(data.task.objective, 120)}`;
    case 'delegation.permission-escalated':
      return `${at}${who}↳ task ${data.taskId} asks a person (${data.approvalId}): ${clip(data.summary)}`;
    case 'delegation.completed':
      return `${at}${who}↳ task ${data.taskId} completed, report ${data.reportStatus}: ${clip(String(data.report?.summary ?? ''), 120)}`;
    case 'delegation.failed':
      return `${at}${who}↳ task ${data.taskId} ${data.cancelled ? 'cancelled' : `failed (${data.failureClass})`}: ${clip(data.reason)}`;
    case 'delegation.joined':
      return `${at}${who}↳ joined (${data.policy}): ${data.outcome}, ${data.children.length} task(s)${data.conflicts.length > 0 ? `, ${data.conflicts.length} conflict(s)` : ''}`;
    case 'approval.requested':
      return `${at}${who}? ${clip(data.summary)} — needs approval (${data.approvalId}): ${clip(data.reason)}`;
    case 'approval.replied':
      return `${at}${who}→ ${data.approvalId}: ${data.decision}${data.feedback ? ` (${clip(data.feedback)})` : ''}`;
    case 'permission.decided':
      if (data.decision === 'allow' && data.source === 'mode') return undefined;
      // The mode's own rule is named `mode:<mode>`: `(mode default: edits need approval)`, not `(mode: mode:default)`.
      return `${at}${who}permission ${data.decision} for ${data.tool}${data.target ? ` ${clip(data.target, 60)}` : ''} (${data.source === 'mode' ? `mode ${String(data.mode ?? String(data.rule ?? '').replace(/^mode:/, ''))}${data.reason ? `: ${clip(data.reason, 80)}` : ''}` : `${data.source}${data.rule ? `: ${data.rule}` : ''}`})`;
    case 'effect.failed':
      return `${at}${who}effect ${data.effectId} failed: ${data.error.code}: ${clip(data.error.message)}`;
    case 'session.cancelled':
      return `${at}${who}cancelled: ${data.reason}`;
    // A step record keeps a witness's digest and leaves its lists to the inputs that hold them.
    case 'turn.call-spec':
      return `${at}${who}turn ${data.turnId}: CallSpec ${data.digest.slice(0, 15)}…${data.callSpec ? ` (${data.callSpec.actionMode}, allow ${data.callSpec.toolPolicy.allow.length} tools)` : ''}`;
    case 'turn.requests':
      return `${at}${who}turn ${data.turnId}: ${data.requests ? `${data.requests.length} ` : ''}requests ${data.multisetDigest.slice(0, 15)}…`;
    case 'turn.results':
      return `${at}${who}turn ${data.turnId}: ${data.rows ? `${data.rows.length} results (${data.rows.filter((row: { status: string }) => row.status === 'error').length} failed)` : `results ${data.digest.slice(0, 15)}…`}`;
    case 'turn.uses':
      return `${at}${who}turn ${data.turnId}: ${data.uses ? `uses ${data.uses.map((use: { disposition: string }) => use.disposition).join(', ')}` : `uses ${data.digest.slice(0, 15)}…`}`;
    case 'turn.join-closed':
      return `${at}${who}turn ${data.turnId}: join closed ${data.joinDigest.slice(0, 15)}…`;
    case 'turn.mutation-ready':
      return `${at}${who}turn ${data.turnId}: MutationReady`;
    case 'turn.blocked':
      return `${at}${who}turn ${data.turnId}: BLOCKED at ${data.stage}: ${data.findings.map((finding: { class: string }) => finding.class).join(', ')}`;
    case 'session.ended':
      return `${at}${who}session ended: ${data.status}${data.reason ? ` (${data.reason})` : ''}${'output' in data ? `; output: ${clip(JSON.stringify(data.output ?? null), 200)}` : ''}${data.unresolved ? `; unresolved: ${data.unresolved.findings.map((finding: { class: string }) => finding.class).join(', ')}` : ''}${data.caveats ? `; left open: ${data.caveats.map((caveat: { kind: string }) => caveat.kind).join(', ')}` : ''}`;
    case 'session.forked':
      return `${at}${who}forked from ${data.parent} at seq ${data.atSeq}${data.reason ? `: ${data.reason}` : ''}`;
    case 'session.resumed':
      return `${at}${who}resumed at seq ${data.fromSeq}${data.inDoubt.length > 0 ? `; in doubt: ${data.inDoubt.join(', ')}` : ''}${data.strayProcessesKilled ? `; killed ${data.strayProcessesKilled} process(es) an earlier run left` : ''}`;
    case 'session.interrupted':
      return `${at}${who}interrupted: ${data.reason}`;
    case 'session.budgets-raised':
      return `${at}${who}budgets raised: ${Object.entries(data as Record<string, unknown>).map(([name, limit]) => `${name} ${String(limit)}`).join(', ')}`;
    case 'effect.resolved':
      return `${at}${who}in-doubt ${data.effectId} (${data.kind}) → ${data.resolution}: ${data.reason}`;
    default:
      return undefined;
  }
};
