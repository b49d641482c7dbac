import type { ContextCompaction, ContextExclusion, ContextInclusion } from '../../models/context.records.js';
import type { ModelMessage } from '../../models/model-contract.js';
import type { ActorContext, ConversationItem, ToolResultItem, TurnItem } from './context.view.js';
import { attribute, fitText, quoteUntrusted } from './context-render.js';
import type { TokenCounter } from './token-counter.js';
import { freezeMessage } from './message-memo.js';

/** The conversation cut for this round: the latest tool turn, the tail before it, and what lies beyond the tail. */
export interface ConversationSplit {
  latest: TurnItem | undefined;
  tail: ConversationItem[];
  beyond: ConversationItem[];
  older: ActorContext['older'];
}

/** What one source contributes: its tokens, ledger entries and the rendered pieces the assembly places. */
export interface Fill {
  tokens: number;
  units: number;
  candidates: number;
  complete: boolean;
  dropped: boolean;
  included: ContextInclusion[];
  excluded: ContextExclusion[];
  compacted: ContextCompaction[];
  /** Messages placed in the conversation (latest observation, tail). */
  messages: ModelMessage[];
  /** A section of the `<session-context>` message (summary, evidence, memory). */
  section: string;
  /** Seqs of conversation items rendered in full (user messages among them need no other place). */
  shownSeqs: ReadonlySet<number>;
  /** Turns cut from the tail for budget (the summary covers them). */
  cut: ConversationItem[];
  dropAll(detail: string): Fill;
}

/** How many chat messages an item becomes: one for a user message, one plus one per tool call for a turn. */
export const messagesOf = (item: ConversationItem): number => (item.kind === 'user' ? 1 : 1 + item.toolCalls.length);

/** The refs of a run of items: `#seq` for one, `#first..#last` for several (items are in seq order). */
export const range = (items: readonly { seq: number }[]): string[] => {
  if (items.length === 0) return [];
  const first = items[0]!.seq;
  const last = items[items.length - 1]!.seq;
  return [first === last ? `#${first}` : `#${first}..#${last}`];
};

/** A fill that includes nothing yet; `dropAll` turns it into one whose candidates are all excluded with `detail`. */
export const emptyFill = (candidates: number, excludedOnDrop: (detail: string) => ContextExclusion[]): Fill => {
  const fill: Fill = {
    tokens: 0, units: 0, candidates, complete: candidates === 0, dropped: false, included: [], excluded: [], compacted: [], messages: [], section: '', shownSeqs: new Set(), cut: [],
    dropAll: (detail) => ({ ...fill, dropped: true, complete: false, excluded: excludedOnDrop(detail) }),
  };
  return fill;
};

/** Split an actor's recent conversation: the latest tool turn, then up to `tailEvents` messages, whole turns only. */
export const splitConversation = (actor: ActorContext, tailEvents: number): ConversationSplit => {
  const items = actor.recent;
  const last = items[items.length - 1];
  const latest = last?.kind === 'turn' && last.toolCalls.length > 0 ? last : undefined;
  let budget = tailEvents - (latest ? messagesOf(latest) : 0);
  let start = items.length - (latest ? 1 : 0);
  while (start > 0 && budget - messagesOf(items[start - 1]!) >= 0) {
    budget -= messagesOf(items[start - 1]!);
    start--;
  }
  // Without a latest tool turn, the newest item (a user message or a final reply) is always in the tail.
  if (!latest && start === items.length && start > 0) start--;
  return { latest, tail: items.slice(start, items.length - (latest ? 1 : 0)), beyond: items.slice(0, start), older: actor.older };
};

/** What hooks added for the model, quoted as untrusted data (hooks inform; they never instruct). */
export const hookContextSection = (text: string, attributes = ''): string => `<hook-context${attributes ? ` ${attributes}` : ''} trust="untrusted">\n${quoteUntrusted(text.length > 8_000 ? `${text.slice(0, 8_000)}…` : text)}\n</hook-context>`;

const referenceNote = (result: ToolResultItem): string =>
  `the full output is record #${result.seq}${result.truncated ? ` (${result.truncated.artifact})` : ''}`;

/** A tool result as the model reads it: quoted inside an untrusted `<tool-output>` section, cut to `maxTokens`. */
export const renderToolResult = (result: ToolResultItem, maxTokens: number, counter: TokenCounter): { content: string; tokens: number; mode: 'full' | 'excerpt' | 'reference' } => {
  const status = result.status === 'ok' ? 'ok' : `error${result.errorCode ? ` ${result.errorCode}` : ''}`;
  const open = `<tool-output tool="${attribute(result.name)}" call="${attribute(result.callId)}" ref="#${result.seq}" status="${status}" trust="untrusted">`;
  const close = '</tool-output>';
  const overhead = counter.count(open) + counter.count(close) + 2;
  const body = fitText(result.observation, Math.max(0, maxTokens - overhead), counter, referenceNote(result));
  const content = `${open}\n${quoteUntrusted(body.text)}\n${close}${result.hookContext ? `\n${hookContextSection(result.hookContext, `call="${attribute(result.callId)}"`)}` : ''}`;
  return { content, tokens: counter.count(content), mode: body.mode };
};

const missingResult = (callId: string, name: string): ToolResultItem => ({ callId, name, seq: 0, status: 'error', errorCode: 'InDoubt', observation: '[no result was recorded for this call]' });

/** A turn as rendered once: the messages' contents and counts, for one result cap and one counter. */
interface RenderedTurn {
  perResult: number;
  counter: TokenCounter;
  messages: readonly ModelMessage[];
  tokens: number;
  modes: string[];
}

/**
 * Renderings by turn item, the last two (a turn is rendered at the latest observation's cap, then at the tail's for
 * the next rounds). Turn items are immutable (a settling result makes a new item), so an unchanged turn in the tail is
 * rendered once instead of on every round: the projection's cost stays with what is new.
 */
const renderedTurns = new WeakMap<TurnItem, RenderedTurn[]>();

/**
 * Render a turn as an assistant message plus one tool message per call (a placeholder when a result is missing).
 * The messages are fresh objects on every call; their contents are rendered once per turn, cap and counter.
 */
export const renderTurn = (turn: TurnItem, perResult: number, counter: TokenCounter): { messages: ModelMessage[]; tokens: number; modes: string[] } => {
  const rendered = renderedTurn(turn, perResult, counter);
  return { messages: rendered.messages.map(copyMessage), tokens: rendered.tokens, modes: rendered.modes.slice() };
};

/**
 * A turn's rendering as kept (see `renderTurn`): its messages frozen and shared, not copied — for the history, which
 * keeps them as they are from round to round.
 */
export const renderedTurn = (turn: TurnItem, perResult: number, counter: TokenCounter): { readonly messages: readonly ModelMessage[]; readonly tokens: number; readonly modes: readonly string[] } => {
  const known = renderedTurns.get(turn);
  let rendered = known?.find((entry) => entry.perResult === perResult && entry.counter === counter);
  if (rendered === undefined) {
    const once = renderTurnOnce(turn, perResult, counter);
    for (const message of once.messages) freezeMessage(message);
    rendered = { perResult, counter, messages: once.messages, tokens: once.tokens, modes: once.modes };
    renderedTurns.set(turn, known === undefined ? [rendered] : [known[known.length - 1]!, rendered]);
  }
  return rendered;
};

const copyMessage = (message: ModelMessage): ModelMessage =>
  message.role === 'assistant' && message.toolCalls ? { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call })) } : { ...message };

const renderTurnOnce = (turn: TurnItem, perResult: number, counter: TokenCounter): { messages: ModelMessage[]; tokens: number; modes: string[] } => {
  const messages: ModelMessage[] = [{ role: 'assistant', content: turn.text, ...(turn.toolCalls.length > 0 ? { toolCalls: turn.toolCalls.map((call) => ({ ...call })) } : {}) }];
  let tokens = counter.count(turn.text) + (turn.toolCalls.length > 0 ? counter.count(JSON.stringify(turn.toolCalls)) : 0) + 4;
  const modes: string[] = [];
  for (const call of turn.toolCalls) {
    const result = turn.results.find((candidate) => candidate.callId === call.callId) ?? missingResult(call.callId, call.name);
    const rendered = renderToolResult(result, perResult, counter);
    messages.push({ role: 'tool', callId: call.callId, name: call.name, content: rendered.content, isError: result.status === 'error' });
    tokens += rendered.tokens + 4;
    modes.push(rendered.mode);
  }
  return { messages, tokens, modes };
};

/** A rendered turn is `full` only when every one of its results is. */
export const turnMode = (modes: readonly string[]): 'full' | 'excerpt' => (modes.every((mode) => mode === 'full') ? 'full' : 'excerpt');

/** The latest observation: the last tool turn with its results, each result cut to an equal share. Never dropped. */
export const latestObservationFill = (split: ConversationSplit, allowance: number, counter: TokenCounter): Fill => {
  const fill = emptyFill(split.latest ? 1 : 0, () => []);
  const turn = split.latest;
  if (!turn) return fill;
  const fixedCost = counter.count(turn.text) + counter.count(JSON.stringify(turn.toolCalls)) + 4 * (1 + turn.toolCalls.length);
  const perResult = Math.floor(Math.max(0, allowance - fixedCost) / Math.max(1, turn.toolCalls.length));
  const rendered = renderTurn(turn, perResult, counter);
  const mode = turnMode(rendered.modes);
  return {
    ...fill,
    tokens: rendered.tokens,
    units: 1,
    complete: mode === 'full',
    messages: rendered.messages,
    shownSeqs: new Set([turn.seq]),
    included: [{ source: 'latest_observation', refs: [`#${turn.seq}`, ...turn.results.map((result) => `#${result.seq}`)], mode, trust: 'untrusted', tokens: rendered.tokens, reason: mode === 'full' ? 'the latest tool results, in full' : 'the latest tool results, cut to the phase budget with references to the full output' }],
  };
};
