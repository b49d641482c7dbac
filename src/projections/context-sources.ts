import type { ContextCompaction, ContextExclusion, ContextInclusion } from '../../models/context.records.js';
import type { ModelMessage } from '../../models/model-contract.js';
import { toArray } from './persistent-list.js';
import type { ActorContext, ConversationItem, ToolResultItem, TurnItem, UserItem } from './context.view.js';
import { attribute, fitText, quoteUntrusted } from './context-render.js';
import type { MemoryHints } from './memory-hints.js';
import type { TokenCounter } from './token-counter.js';

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

const messagesOf = (item: ConversationItem): number => (item.kind === 'user' ? 1 : 1 + item.toolCalls.length);

const range = (items: readonly { seq: number }[]): string[] => {
  if (items.length === 0) return [];
  const first = items[0]!.seq;
  const last = items[items.length - 1]!.seq;
  return [first === last ? `#${first}` : `#${first}..#${last}`];
};

const emptyFill = (candidates: number, excludedOnDrop: (detail: string) => ContextExclusion[]): Fill => {
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

const referenceNote = (result: ToolResultItem): string =>
  `the full output is record #${result.seq}${result.truncated ? ` (${result.truncated.artifact})` : ''}`;

/** A tool result as the model reads it: quoted inside an untrusted `<tool-output>` section, cut to `maxTokens`. */
export const renderToolResult = (result: ToolResultItem, maxTokens: number, counter: TokenCounter): { content: string; tokens: number; mode: 'full' | 'excerpt' | 'reference' } => {
  const status = result.status === 'ok' ? 'ok' : `error${result.errorCode ? ` ${result.errorCode}` : ''}`;
  const open = `<tool-output tool="${attribute(result.name)}" call="${attribute(result.callId)}" ref="#${result.seq}" status="${status}" trust="untrusted">`;
  const close = '</tool-output>';
  const overhead = counter.count(open) + counter.count(close) + 2;
  const body = fitText(result.observation, Math.max(0, maxTokens - overhead), counter, referenceNote(result));
  const content = `${open}\n${quoteUntrusted(body.text)}\n${close}`;
  return { content, tokens: counter.count(content), mode: body.mode };
};

const missingResult = (callId: string, name: string): ToolResultItem => ({ callId, name, seq: 0, status: 'error', errorCode: 'InDoubt', observation: '[no result was recorded for this call]' });

/** Render a turn as an assistant message plus one tool message per call (a placeholder when a result is missing). */
const renderTurn = (turn: TurnItem, perResult: number, counter: TokenCounter): { messages: ModelMessage[]; tokens: number; modes: string[] } => {
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

const turnMode = (modes: readonly string[]): 'full' | 'excerpt' => (modes.every((mode) => mode === 'full') ? 'full' : 'excerpt');

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

const summaryLine = (item: ConversationItem): string => {
  if (item.kind === 'user') return `#${item.seq} user message (kept in full under earlier-user-messages)`;
  const text = item.text.replace(/\s+/g, ' ').trim();
  const said = text ? `"${text.length > 80 ? `${text.slice(0, 79)}…` : text}"` : '(no text)';
  const calls = item.toolCalls.map((call) => {
    const result = item.results.find((candidate) => candidate.callId === call.callId);
    const target = typeof call.arguments.path === 'string' ? call.arguments.path : typeof call.arguments.command === 'string' ? call.arguments.command : '';
    const outcome = !result ? 'no result' : result.status === 'ok' ? 'ok' : `error ${result.errorCode ?? ''}`.trim();
    return `${call.name}(${target.length > 60 ? `${target.slice(0, 59)}…` : target}) ${outcome}`;
  });
  return `#${item.seq} turn ${item.turn}: ${said}${calls.length > 0 ? ` → ${calls.join(', ')}` : ''}`;
};

const olderLine = (older: ActorContext['older']): string => {
  const calls = Object.entries(older.calls)
    .sort(([left], [right]) => (left < right ? -1 : 1))
    .map(([name, counts]) => `${name} ok×${counts.ok}${counts.error ? ` error×${counts.error}` : ''}`);
  return `earlier: ${older.turns} turns and ${older.users} user messages (#${older.firstSeq}..#${older.lastSeq})${calls.length > 0 ? `: ${calls.join(', ')}` : ''}`;
};

/**
 * The recent tail in full (newest first while it fits, whole turns only, older results cut harder) and a bounded
 * summary standing in for everything older: one line per item (newest first, at most `summaryLines`), one line of
 * counts for items that left the view, and the user constraints that stay in force. The log is not touched.
 */
export const tailFill = (actor: ActorContext, split: ConversationSplit, allowance: number, limit: number, counter: TokenCounter, summaryLines: number): Fill => {
  const candidates = split.tail.length + (split.beyond.length > 0 || split.older.items > 0 ? 1 : 0);
  const fill = emptyFill(candidates, (detail) => [
    ...(split.tail.length > 0 ? [{ source: 'recent_tail' as const, refs: range(split.tail), count: split.tail.length, reason: 'priority' as const, detail }] : []),
  ]);
  if (candidates === 0) return fill;
  const constraints = toArray(actor.constraints);
  const keeps = constraints.map((constraint) => ({ ref: `#${constraint.seq}`, text: constraint.text, prohibition: constraint.prohibition }));
  const keepsLine = constraints.length > 0 ? `user constraints still in force (verbatim under user-constraints): ${constraints.map((constraint) => `#${constraint.seq}`).join(', ')}` : '';

  const shown: ConversationItem[] = [];
  const messages: ModelMessage[][] = [];
  const included: ContextInclusion[] = [];
  let used = 0;
  const summaryReserve = split.beyond.length > 0 || split.older.items > 0 ? Math.min(Math.floor(allowance * 0.2), 400) : 0;
  const perResult = Math.max(200, Math.floor((allowance - summaryReserve) / 4));
  for (let index = split.tail.length - 1; index >= 0; index--) {
    const item = split.tail[index]!;
    if (item.kind === 'user') {
      shown.push(item);
      messages.push([{ role: 'user', content: item.text }]);
      continue;
    }
    const rendered = renderTurn(item, perResult, counter);
    const cap = included.length === 0 ? limit : allowance - summaryReserve;
    if (used + rendered.tokens > cap) break;
    used += rendered.tokens;
    shown.push(item);
    messages.push(rendered.messages);
    included.push({ source: 'recent_tail', refs: [`#${item.seq}`, ...item.results.map((result) => `#${result.seq}`)], mode: turnMode(rendered.modes), trust: 'untrusted', tokens: rendered.tokens, reason: 'recent tail' });
  }
  const cut = split.tail.slice(0, split.tail.length - shown.length);
  const summarised = [...split.beyond, ...cut];
  const excluded: ContextExclusion[] = [];
  if (split.older.items > 0) excluded.push({ source: 'recent_tail', refs: [`#${split.older.firstSeq}..#${split.older.lastSeq}`], count: split.older.items, reason: 'beyond-tail', detail: 'counted in the history summary' });
  if (split.beyond.length > 0) excluded.push({ source: 'recent_tail', refs: range(split.beyond), count: split.beyond.length, reason: 'beyond-tail', detail: 'summarised in the history summary' });
  if (cut.length > 0) excluded.push({ source: 'recent_tail', refs: range(cut), count: cut.length, reason: 'budget', detail: 'summarised in the history summary' });

  let section = '';
  const compacted: ContextCompaction[] = [];
  if (summarised.length > 0 || split.older.items > 0) {
    const refs = [...(split.older.items > 0 ? [`#${split.older.firstSeq}..#${split.older.lastSeq}`] : []), ...range(summarised)];
    const header = `<history-summary replaces="${refs.join(' ')}" trust="fact">\n[${summarised.length + split.older.items} earlier items are summarised here; the log keeps them in full (rein context, rein show)]`;
    const footer = '</history-summary>';
    const fixedLines = [...(split.older.items > 0 ? [olderLine(split.older)] : []), ...(keepsLine ? [keepsLine] : [])];
    let tokens = counter.count(header) + counter.count(footer) + fixedLines.reduce((sum, line) => sum + counter.count(line) + 1, 0);
    if (tokens <= limit - used) {
      const lines: string[] = [];
      for (let index = summarised.length - 1; index >= 0 && lines.length < summaryLines; index--) {
        const line = summaryLine(summarised[index]!);
        const cost = counter.count(line) + 1;
        if (tokens + cost > allowance - used) break;
        tokens += cost;
        lines.unshift(line);
      }
      const omitted = summarised.length - lines.length;
      const body = [header, ...(split.older.items > 0 ? [olderLine(split.older)] : []), ...(omitted > 0 ? [`[${omitted} more items not listed (${range(summarised.slice(0, omitted)).join('')})]`] : []), ...lines, ...(keepsLine ? [keepsLine] : []), footer];
      section = body.join('\n');
      const sectionTokens = counter.count(section);
      used += sectionTokens;
      included.push({ source: 'history_summary', refs, mode: 'summary', trust: 'fact', tokens: sectionTokens, reason: `${summarised.length + split.older.items} items beyond the tail, newest ${lines.length} listed one line each` });
      compacted.push({ summaryId: `summary:${refs.join(',')}`, replaces: refs, count: summarised.length + split.older.items, keeps, reason: cut.length > 0 ? 'beyond the recent tail or cut for budget' : 'beyond the recent tail' });
    }
  }
  const units = shown.filter((item) => item.kind === 'turn').length + (section ? 1 : 0);
  return {
    ...fill,
    tokens: used,
    units,
    complete: cut.length === 0 && included.every((entry) => entry.mode === 'full' || entry.source === 'history_summary'),
    included,
    excluded,
    compacted,
    messages: messages.reverse().flat(),
    section,
    shownSeqs: new Set(shown.map((item) => item.seq)),
    cut,
  };
};

/** Evidence: the last read of each file that has left the tail, newest first, while fresh (not written since). */
export const evidenceFill = (actor: ActorContext, shownResultSeqs: ReadonlySet<number>, allowance: number, limit: number, counter: TokenCounter): Fill => {
  const reads = [...actor.reads].reverse();
  const fill = emptyFill(reads.length, (detail) => (reads.length > 0 ? [{ source: 'evidence', refs: reads.map((read) => `#${read.seq}`), count: reads.length, reason: 'priority', detail }] : []));
  if (reads.length === 0) return fill;
  const included: ContextInclusion[] = [];
  const excluded: ContextExclusion[] = [];
  const sections: string[] = [];
  let used = 0;
  let full = true;
  let budgetCut = false;
  let eligible = 0;
  for (const read of reads) {
    const changed = actor.modified.find((entry) => entry.path === read.path && entry.seq > read.seq);
    if (changed) {
      excluded.push({ source: 'evidence', refs: [`#${read.seq}`], count: 1, reason: 'stale', detail: `${read.path} was changed at #${changed.seq} after this read` });
      continue;
    }
    if (shownResultSeqs.has(read.seq)) {
      excluded.push({ source: 'evidence', refs: [`#${read.seq}`], count: 1, reason: 'in-tail', detail: `${read.path} is already shown in the tail` });
      continue;
    }
    eligible++;
    const cap = included.length === 0 ? limit : allowance;
    const open = `<evidence source="read ${attribute(read.path)}" ref="#${read.seq}" trust="untrusted">`;
    const overhead = counter.count(open) + 8;
    const room = Math.min(cap - used, Math.max(300, Math.floor(allowance / 2))) - overhead;
    const body = budgetCut || room < 40 ? undefined : fitText(read.observation, room, counter, `the full read is record #${read.seq}`);
    if (!body) {
      budgetCut = true;
      excluded.push({ source: 'evidence', refs: [`#${read.seq}`], count: 1, reason: 'budget', detail: `${read.path} did not fit the evidence budget` });
      continue;
    }
    const section = `${open}\n${quoteUntrusted(body.text)}\n</evidence>`;
    const tokens = counter.count(section);
    used += tokens;
    full &&= body.mode === 'full';
    sections.push(section);
    included.push({ source: 'evidence', refs: [`#${read.seq}`], mode: body.mode, trust: 'untrusted', tokens, reason: `last read of ${read.path}; not changed since` });
  }
  return { ...fill, candidates: eligible, tokens: used, units: included.length, complete: !budgetCut && full, included, excluded, section: sections.join('\n') };
};

const describeHint = (hint: MemoryHints['hints'][number]): string => {
  const phrasing = hint.authority === 'rule' ? 'rule from long-term memory' : hint.authority === 'default' ? 'default from long-term memory; verify before relying on it' : 'hint: past sessions suggest this; verify before relying on it';
  return `- (${hint.scope.level} scope, ${hint.confidence} confidence, ${phrasing}) ${quoteUntrusted(hint.content)} [memory:${attribute(hint.recordId)}]`;
};

/** Memory hints: active, unexpired, in-scope, confident records (already filtered), phrased by their authority. */
export const memoryFill = (hints: MemoryHints, allowance: number, limit: number, counter: TokenCounter): Fill => {
  const governanceExclusions: ContextExclusion[] = hints.excluded.slice(0, 20).map(({ record, reason }) => ({ source: 'memory', refs: [`memory:${record.recordId}`], count: 1, reason }));
  const fill = emptyFill(hints.hints.length, (detail) => [...governanceExclusions, ...(hints.hints.length > 0 ? [{ source: 'memory' as const, refs: hints.hints.slice(0, 20).map((hint) => `memory:${hint.recordId}`), count: hints.hints.length, reason: 'priority' as const, detail }] : [])]);
  const excluded = [...governanceExclusions];
  if (hints.hints.length === 0) return { ...fill, excluded };
  const open = '<memory-hints trust="untrusted">';
  const close = '</memory-hints>';
  let used = counter.count(open) + counter.count(close);
  const lines: string[] = [];
  const included: ContextInclusion[] = [];
  for (const hint of hints.hints.slice(0, 10)) {
    const line = describeHint(hint);
    const tokens = counter.count(line) + 1;
    if (used + tokens > (lines.length === 0 ? limit : allowance)) break;
    used += tokens;
    lines.push(line);
    included.push({ source: 'memory', refs: [`memory:${hint.recordId}`], mode: 'full', trust: 'untrusted', tokens, reason: `active ${hint.scope.level}-scope memory, ${hint.confidence} confidence` });
  }
  const left = hints.hints.slice(lines.length);
  if (left.length > 0) excluded.push({ source: 'memory', refs: left.slice(0, 20).map((hint) => `memory:${hint.recordId}`), count: left.length, reason: 'budget' });
  if (lines.length === 0) return { ...fill, excluded };
  return { ...fill, tokens: used, units: lines.length, complete: left.length === 0, included, excluded, section: [open, ...lines, close].join('\n') };
};

/** The seqs of tool results rendered in full or in part by the latest observation and the tail. */
export const shownResultSeqs = (split: ConversationSplit, shownItems: ReadonlySet<number>): Set<number> => {
  const seqs = new Set<number>();
  for (const item of [...split.tail, ...(split.latest ? [split.latest] : [])]) {
    if (item.kind === 'turn' && shownItems.has(item.seq)) for (const result of item.results) seqs.add(result.seq);
  }
  return seqs;
};

export type { UserItem };
