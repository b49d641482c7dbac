import { defaultPrices, type Prices } from '../../models/price-table.js';
import { firstValueFrom, takeWhile, tap, toArray, type Subscription } from 'rxjs';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { SessionResult } from '../host/session-host.js';
import type { ReinSession } from '../session/session-handle.js';
import { answerPending, type ApprovalAnswering } from './approval-prompt.js';
import { ExitCode } from './exit-codes.js';
import { onOutputClosed } from './output-closed.js';
import { LiveRenderer } from './live-renderer.js';
import type { EventStore } from '../../stores/event-store.js';
import type { SandboxChecked } from '../../models/sandbox.records.js';
import { sandboxLine } from '../policy/sandbox-status.js';
import type { PluginFailed } from '../../models/plugin.records.js';
import { pluginFailedLine } from './transcript.js';
import { shellWord } from '../util/shell-word.js';
import { literalPattern, ruleSubject } from '../policy/permission-rules.js';
import { terminalText } from '../util/terminal-text.js';
import { sessionOutcome } from '../trace/session-outcome.js';
import type { TraceOutcome } from '../trace/trace-types.js';

/**
 * Print what this run starts with, from its first records: the sandbox it records (`sandbox.checked`, the latest one),
 * so a person sees what isolates commands, and every plugin this process could not load (`plugin.failed`, written
 * with it: a `--plugin` directory that does not exist, a manifest that is wrong) — the session goes on without it.
 */
export const printSandbox = async (store: EventStore, sessionId: string): Promise<void> => {
  const recent = await store.read(sessionId, { reverse: true, limit: 64 });
  const checked = recent.find((record) => record.type === 'sandbox.checked');
  if (checked) process.stdout.write(`${sandboxLine(checked.data as SandboxChecked)}\n`);
  // This process's start: the latest `session.created` / `session.resumed` (a resume records its plugins again).
  const start = recent.find((record) => record.type === 'session.created' || record.type === 'session.resumed')?.seq ?? 0;
  const failed = recent.filter((record) => record.type === 'plugin.failed' && record.seq > start).reverse();
  for (const record of failed) process.stdout.write(`${pluginFailedLine(record.data as PluginFailed)}\n`);
};

/**
 * Stop the harness's plugins once its session is quiet (`plugin.stopped` goes into the log), and with `--json` print
 * the records that appended after the ones already printed, so the NDJSON output is the whole log.
 */
export const stopPluginsAfter = async (rein: { stopPlugins(reason?: string): Promise<void>; store: EventStore }, sessionId: string, options: { json: boolean; printedThrough: number; reason: string }): Promise<void> => {
  await rein.stopPlugins(options.reason);
  if (!options.json) return;
  for (const record of await rein.store.read(sessionId, { from: options.printedThrough + 1 })) process.stdout.write(`${JSON.stringify(record)}\n`);
};

/** The termination signals rein handles like Ctrl-C, with the conventional exit code of each (128 + its number). */
export const terminationSignals = { SIGTERM: 143, SIGHUP: 129 } as const;

/** The signal that interrupted this process's session (`SIGTERM`, `SIGHUP`), if one did: its exit code is the signal's. */
let interruptingSignal: keyof typeof terminationSignals | undefined;

/** Record that a termination signal interrupts the session (or the session about to exist). */
export const noteInterruptingSignal = (signal: keyof typeof terminationSignals): void => {
  interruptingSignal = signal;
};

/** Write to stderr, ignoring a terminal that is gone (SIGHUP: writing to it fails with EIO). */
export const tellStderr = (text: string): void => {
  try {
    process.stderr.write(text);
  } catch {
    // nobody is reading any more
  }
};

/** A session's result as the CLI reports it: with the trace's outcome of a completed session (`sessionOutcome`). */
export type CliSessionResult = SessionResult & { outcome?: TraceOutcome };

/**
 * The exit code a finished (or paused) session maps to: a `completed` session whose trace outcome is `failed` (its
 * last verification failed, whatever the final answer claims) exits 1; `succeeded` and `unverified` exit 0.
 */
export const exitCodeOf = (result: CliSessionResult): number => {
  if (result.status === 'completed') return result.outcome === 'failed' ? ExitCode.failed : ExitCode.ok;
  if (result.status === 'paused') return result.waitingFor === 'budget' ? ExitCode.costBudget : ExitCode.paused;
  if (result.status === 'interrupted') return interruptingSignal ? terminationSignals[interruptingSignal] : ExitCode.interrupted;
  return ExitCode.failed;
};

/**
 * The `--approve` rule a printed hint suggests: as narrow as the question — the command for bash (`bash:npm test`), the
 * path for a file tool (`write:src/add.js`), never the whole tool when the request names what it touches.
 */
export const approvalHint = (request: { tool: string; target?: string; suggestedRule?: string }): string => {
  const suggested = request.suggestedRule ?? request.tool;
  return suggested === request.tool && request.target !== undefined ? ruleSubject({ tool: request.tool, pattern: literalPattern(request.target) }) : suggested;
};

/** The folders of the plugins the session's records say came from a `--plugin` flag, once each. */
export const cliPluginLocations = (records: readonly RecordEnvelope[]): string[] => {
  const locations = new Set<string>();
  for (const record of records) {
    const data = record.data as { source?: string; location?: string };
    if (record.type === 'plugin.loaded' && data.source === 'cli' && data.location) locations.add(data.location);
  }
  return [...locations];
};

/** ` --plugin <dir>` for each folder (quoted when needed): what a printed resume command must repeat. */
export const pluginFlags = (locations: readonly string[]): string => locations.map((location) => ` --plugin ${shellWord(location)}`).join('');

/**
 * Drive a session to quiet for the CLI: render it (or print NDJSON records), answer approval requests (in advance
 * from the flags, or at the terminal), make Ctrl-C interrupt it cleanly (running effects aborted, session
 * resumable), and return the result once nothing is running and nobody here can answer what it waits for.
 */
export const runToQuiet = async (
  session: ReinSession,
  options: { json: boolean; begin?: () => Promise<void>; approvals?: ApprovalAnswering; from?: number; calls?: ReadonlyArray<{ effectId: string; arguments: Record<string, unknown> }>; effects?: readonly string[]; interruptAtStart?: boolean; prices?: Prices; where?: string },
): Promise<CliSessionResult> => {
  const startedAt = Date.now();
  const where = options.where ?? '';
  const renderer = new LiveRenderer(process.stdout, { ...(options.prices ? { prices: { ...defaultPrices, ...options.prices } } : {}), where });
  for (const call of options.calls ?? []) renderer.rememberCall(call.effectId, call.arguments);
  // Effects requested before `from` (reruns on resume) show their progress without waiting for their request.
  for (const effectId of options.effects ?? []) renderer.rememberEffect(effectId);
  // From a seq (resume): history first, then live — it can lag behind the session, so the summary waits for it.
  const from = options.from;
  let lastPrinted = from === undefined ? 0 : from - 1;
  const subscription: Subscription = options.json
    ? session.records(1).subscribe((record) => {
        lastPrinted = record.seq;
        process.stdout.write(`${JSON.stringify(record)}\n`);
      })
    : renderer.attach(from === undefined ? session : { records$: session.records(from).pipe(tap((record) => (lastPrinted = record.seq))), live$: session.live$ });
  let interrupted = false;
  // A question waiting at the prompt is cut off by whatever interrupts the run (Ctrl-C, a signal, the output gone).
  const cutOff = new AbortController();
  const onInterrupt = () => {
    if (interrupted) process.exit(ExitCode.interrupted);
    interrupted = true;
    cutOff.abort();
    tellStderr('\ninterrupting… (press Ctrl-C again to force)\n');
    void session.interrupt('interrupted by the user (Ctrl-C)');
  };
  process.on('SIGINT', onInterrupt);
  // SIGTERM (`kill`, `timeout`, a service manager) and SIGHUP (the terminal closed) interrupt the same way: background
  // commands stopped, the protected paths checked again, `session.interrupted` recorded — then the signal's exit code.
  const onTerminate = (signal: keyof typeof terminationSignals) => {
    if (interrupted) process.exit(interruptingSignal ? terminationSignals[interruptingSignal] : terminationSignals[signal]);
    interrupted = true;
    cutOff.abort();
    noteInterruptingSignal(signal);
    tellStderr(`\nrein: ${signal}: interrupting session ${session.id}; continue it with rein resume ${session.id}\n`);
    void session.interrupt(`interrupted by ${signal}`);
  };
  const onTerm = () => onTerminate('SIGTERM');
  const onHup = () => onTerminate('SIGHUP');
  process.on('SIGTERM', onTerm);
  process.on('SIGHUP', onHup);
  let outputGone = false;
  onOutputClosed(() => {
    if (outputGone) return;
    outputGone = true;
    tellStderr(`rein: stdout was closed: interrupting session ${session.id}; continue it with rein resume ${session.id}\n`);
    if (!interrupted) {
      interrupted = true;
      cutOff.abort();
      void session.interrupt('stdout was closed');
    }
  });
  try {
    if (options.interruptAtStart) {
      // Ctrl-C came while the session was being created (the caller held it): nothing of the task has run, so none
      // is started; the session is recorded as interrupted, and the summary names it for `rein resume`.
      interrupted = true;
      await session.interrupt(interruptingSignal ? `interrupted by ${interruptingSignal} before the task was sent` : 'interrupted by the user (Ctrl-C) before the task was sent');
    } else await options.begin?.();
    let result = await session.whenQuiet();
    for (;;) {
      if (!options.approvals || result.status !== 'paused' || interrupted) break;
      const answered = await answerPending(session, options.approvals, cutOff.signal);
      // Ctrl-C at the prompt interrupts like Ctrl-C anywhere else: the question stays pending, the exit is 130. A signal
      // that came while it waited has interrupted the session already. Ctrl-D leaves nobody to answer: the same.
      if (answered === 'interrupted') {
        if (!interrupted) onInterrupt();
      } else if (answered === 'end-of-input') {
        if (!interrupted) {
          interrupted = true;
          tellStderr(`rein: end of input at the approval prompt: interrupting session ${session.id}; continue it with rein resume ${session.id}\n`);
          await session.interrupt('end of input at the approval prompt (Ctrl-D)');
        }
      } else if (answered === 0) break;
      result = await session.whenQuiet();
    }
    if (options.json || from !== undefined) {
      while (lastPrinted < session.snapshot().head) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // The summary counts the whole session, not only what this process ran (a resume sees part of it); a completed
    // session's outcome (and exit code) is what its verifications show.
    const records = options.json && result.status !== 'completed' ? [] : await firstValueFrom(session.records(1).pipe(takeWhile((record) => record.seq < result.head, true), toArray()));
    const outcome = result.status === 'completed' ? sessionOutcome(records) : undefined;
    if (!options.json) {
      process.stdout.write(renderer.summary(result, startedAt, records, outcome));
      // The plugins this session was given with --plugin (their hooks may guard it): a resume needs them again.
      const plugins = pluginFlags(cliPluginLocations(records));
      for (const request of result.status === 'paused' ? session.pendingApprovals() : []) {
        process.stdout.write(`waiting for approval ${request.approvalId}${request.actor && request.actor !== 'root' ? ` (child agent ${terminalText(request.actor)})` : ''}: ${terminalText(request.summary)}\n  answer with: rein resume ${result.sessionId}${where}${plugins} --approve ${shellWord(approvalHint(request))} (or --yes)\n`);
      }
      if (plugins && (result.status === 'paused' || result.status === 'interrupted') && session.pendingApprovals().length === 0) process.stdout.write(`resume it with: rein resume ${result.sessionId}${plugins}\n`);
    }
    return outcome ? { ...result, outcome } : result;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerm);
    process.off('SIGHUP', onHup);
    onOutputClosed(undefined);
    subscription.unsubscribe();
  }
};
