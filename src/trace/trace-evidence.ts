import { normalizeSpace } from '../projections/key-lines.js';
import { toArray } from '../projections/persistent-list.js';
import type { TraceAction, TraceContext, TraceTurn, TraceView } from '../projections/trace.view.js';
import type { ReadText } from './trace-types.js';
import { commandsRun } from '../policy/shell-commands.js';

/** Every turn of the view (closed and open), in the order they were requested. */
export const turnsOf = (view: TraceView): TraceTurn[] =>
  [...toArray(view.closed), ...Object.values(view.open)].sort((left, right) => left.requested.seq - right.requested.seq);

/**
 * Tools whose successful call changes the workspace (the same defaults as the context view). A shell call counts
 * when it ran and the classifier found more than reading in it (`changedByCommand`).
 */
export const mutatingTools: ReadonlySet<string> = new Set(['write', 'edit', 'edit_lines', 'apply_patch', 'delete']);

/** git verbs that record or move history without touching a file of the working tree. */
const historyOnlyGit = new Set(['add', 'commit', 'tag', 'push', 'fetch', 'notes']);

/**
 * Whether a shell call that ran may have changed the workspace: its permission decision did not record it
 * `read-only`, and found more than `network` (`sed -i`, a redirect, `rm`, `npm install`, a chained or unreadable line), unless every
 * command of the line only records history (`git add`, `git commit`, …). A command changes files as `write` does, so
 * a passing test run before it no longer speaks for the code.
 */
const changedByCommand = (action: TraceAction): boolean => action.settled?.execution !== undefined && mayChangeFiles(action);

/** Whether a shell call's recorded permission classes (and its line) say it may have changed files. */
const mayChangeFiles = (action: TraceAction): boolean => {
  const command = action.arguments.command;
  const classes = action.permission?.classes;
  if (typeof command !== 'string' || !classes) return false;
  // `read-only` is recorded only when every part of the line only reads (`chained` marks a pipe or list of them).
  if (classes.includes('read-only') || classes.every((shellClass) => shellClass === 'network' || shellClass === 'chained')) return false;
  const run = commandsRun(command);
  return run.hidden !== undefined || run.dynamic.length > 0 || run.commands.length === 0 || !run.commands.every((line) => {
    const [program, verb] = line.split(/\s+/);
    return program === 'git' && verb !== undefined && historyOnlyGit.has(verb);
  });
};

/** Whether a call changed the workspace: a successful write tool, or a shell command that did more than read. */
export const changesWorkspace = (action: TraceAction): boolean =>
  !action.verification && ((mutatingTools.has(action.name) && action.settled?.status === 'ok') || changedByCommand(action));

/**
 * A shell call left running in the background (`run_in_background`) that may change files: its call returned
 * before the command ended (no execution on its result), and its permission classes are not read-only.
 */
export const backgroundWriter = (action: TraceAction): boolean =>
  action.settled !== undefined && action.settled.status === 'ok' && action.settled.execution === undefined && /"background":\s*true/.test(action.settled.observation) && mayChangeFiles(action);

/** The seq of each background command's `command.ended`, by call id. */
export const backgroundEndsOf = (view: TraceView): ReadonlyMap<string, number> =>
  new Map(toArray(view.notes).filter((note) => note.type === 'command.ended' && note.callId !== undefined).map((note) => [note.callId!, note.seq]));

/** The last change to the workspace: its seq (0: none), and when a background command made it, which one. */
export interface LastChange {
  seq: number;
  /** A background command that may change files: its call's request, and its `command.ended` (absent: no end recorded). */
  background?: { requested: number; ended?: number };
}

/**
 * The last change to the workspace. A background command that may change files changes them until it ends: when its
 * `command.ended` falls while a verifying command ran (between its start and its result) or after, the change counts
 * after that verification (its call's result seq, or the end's); while no end is recorded (still running, or
 * stopped by rein's own exit) it counts after everything (`Infinity`) — no earlier verification speaks for the code.
 */
export const lastChange = (turns: readonly TraceTurn[], backgroundEnds: ReadonlyMap<string, number> = new Map()): LastChange => {
  const actions = turns.flatMap((turn) => turn.actions);
  const verifying = actions.filter((action) => action.verification && action.started && action.settled);
  let last: LastChange = { seq: 0 };
  for (const action of actions) {
    if (changesWorkspace(action) && action.settled) {
      if (action.settled.seq > last.seq) last = { seq: action.settled.seq };
    } else if (backgroundWriter(action)) {
      const ended = backgroundEnds.get(action.callId);
      let seq = ended ?? Number.POSITIVE_INFINITY;
      // Ended while a test run was running: it may have changed the code after the run read it.
      for (const run of verifying) if (ended !== undefined && run.started!.seq < ended && ended < run.settled!.seq) seq = Math.max(seq, run.settled!.seq);
      if (seq > last.seq) last = { seq, background: { requested: action.requested.seq, ...(ended !== undefined ? { ended } : {}) } };
    }
  }
  return last;
};

/** The seq of the last change to the workspace, 0 when nothing changed (see `lastChange`). */
export const lastMutationSeq = (turns: readonly TraceTurn[], backgroundEnds: ReadonlyMap<string, number> = new Map()): number => lastChange(turns, backgroundEnds).seq;

const success = /\b(fixed|done|pass(?:es|ed|ing)?|succe(?:ss|ssful|ssfully|eded|eds)|resolved|complete[sd]?|works|working|green|all good)\b/i;
const negated = /\b(not|couldn't|could not|unable|failed to|can't|cannot|didn't|did not|doesn't|does not)\b[^.!?\n]{0,40}\b(fix|pass|complete|work|succeed|resolve)/i;

/** True when a final message claims the task succeeded (and does not say it failed to). */
export const claimsSuccess = (text: string): boolean => success.test(text) && !negated.test(text);

/**
 * Loads the exact model inputs recorded by `context.projected` (read-only) and answers whether a fact reached one.
 * Inputs are parsed once and kept as whitespace-normalised text.
 */
export class ContextReader {
  private readonly cache = new Map<string, Promise<string | undefined>>();
  constructor(private readonly readText: ReadText) {}

  /** The text the model saw for a context snapshot, or undefined when its blob is missing or unreadable. */
  text(context: TraceContext): Promise<string | undefined> {
    let loaded = this.cache.get(context.input);
    if (!loaded) {
      loaded = this.readText(context.input).then((raw) => {
        if (raw === undefined) return undefined;
        try {
          const input = JSON.parse(raw) as { messages?: Array<{ content?: unknown; toolCalls?: unknown }> };
          return normalizeSpace((input.messages ?? []).map((message) => `${String(message.content ?? '')} ${message.toolCalls ? JSON.stringify(message.toolCalls) : ''}`).join('\n'));
        } catch {
          return undefined;
        }
      });
      this.cache.set(context.input, loaded);
    }
    return loaded;
  }

  /** `yes` / `no` when the turn's (last attempt's) input was read, `unknown` when no snapshot was recorded or readable. */
  async reached(turn: TraceTurn | undefined, facts: readonly string[]): Promise<{ answer: 'yes' | 'no' | 'unknown'; found: string[]; context?: TraceContext }> {
    const context = turn?.contexts[turn.contexts.length - 1];
    if (!context) return { answer: 'unknown', found: [] };
    const text = await this.text(context);
    if (text === undefined) return { answer: 'unknown', found: [], context };
    const found = facts.filter((fact) => text.includes(normalizeSpace(fact)));
    return { answer: found.length > 0 ? 'yes' : 'no', found, context };
  }
}

/** The full output of a tool call: its artifact when the observation was cut, else the observation. */
export const fullOutput = async (action: TraceAction, readText: ReadText): Promise<string | undefined> => {
  if (!action.settled) return undefined;
  if (!action.settled.truncated) return action.settled.observation;
  return readText(action.settled.truncated.artifact);
};

/** The first turn of `actor` requested after `seq` (the next time its model was asked). */
export const nextTurnAfter = (turns: readonly TraceTurn[], actor: string, seq: number): TraceTurn | undefined => turns.find((turn) => turn.actor === actor && turn.requested.seq > seq);
