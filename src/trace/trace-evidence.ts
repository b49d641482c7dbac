import { normalizeSpace } from '../projections/key-lines.js';
import { toArray } from '../projections/persistent-list.js';
import type { TraceAction, TraceContext, TraceTurn, TraceView } from '../projections/trace.view.js';
import type { ReadText } from './trace-types.js';

/** Every turn of the view (closed and open), in the order they were requested. */
export const turnsOf = (view: TraceView): TraceTurn[] =>
  [...toArray(view.closed), ...Object.values(view.open)].sort((left, right) => left.requested.seq - right.requested.seq);

/**
 * Tools whose successful call changes the workspace (the same defaults as the context view). A shell tool is not
 * counted: most of its calls only read, and counting them would make every later passing test look stale.
 */
export const mutatingTools: ReadonlySet<string> = new Set(['write', 'edit', 'edit_lines', 'apply_patch', 'delete']);

/** The seq of the last successful change to the workspace, 0 when nothing changed. */
export const lastMutationSeq = (turns: readonly TraceTurn[]): number => {
  let last = 0;
  for (const turn of turns) for (const action of turn.actions) if (mutatingTools.has(action.name) && action.settled?.status === 'ok' && !action.verification) last = Math.max(last, action.settled.seq);
  return last;
};

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
