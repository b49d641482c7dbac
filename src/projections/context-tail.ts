import type { ContextCompaction, ContextExclusion, ContextInclusion } from '../../models/context.records.js';
import type { ModelMessage } from '../../models/model-contract.js';
import { toArray } from './persistent-list.js';
import type { ActorContext, ConversationItem } from './context.view.js';
import { emptyFill, hookContextSection, range, renderTurn, turnMode, type ConversationSplit, type Fill } from './context-sources.js';
import type { TokenCounter } from './token-counter.js';
import { callSummary } from './call-summary.js';

/**
 * Summary lines by item. Conversation items are immutable (a settling result makes a new turn item), and up to
 * `summaryLines` of them are summarised again on every projection: each is rendered once.
 */
const renderedSummaryLines = new WeakMap<ConversationItem, string>();

const summaryLine = (item: ConversationItem): string => {
  let line = renderedSummaryLines.get(item);
  if (line === undefined) {
    line = renderSummaryLine(item);
    renderedSummaryLines.set(item, line);
  }
  return line;
};

const renderSummaryLine = (item: ConversationItem): string => {
  if (item.kind === 'user') return `#${item.seq} user message (kept in full under earlier-user-messages)`;
  const text = item.text.replace(/\s+/g, ' ').trim();
  const said = text ? `"${text.length > 80 ? `${text.slice(0, 79)}…` : text}"` : '(no text)';
  const calls = item.toolCalls.map((call) => callSummary(call, item.results.find((candidate) => candidate.callId === call.callId)));
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
  // Units are turns and the summary: user messages in the tail are always shown, so they never starve the tail.
  const candidates = split.tail.filter((item) => item.kind === 'turn').length + (split.beyond.length > 0 || split.older.items > 0 ? 1 : 0);
  const fill = emptyFill(candidates, (detail) => [
    ...(split.tail.length > 0 ? [{ source: 'recent_tail' as const, refs: range(split.tail), count: split.tail.length, reason: 'priority' as const, detail }] : []),
  ]);
  if (split.tail.length === 0 && candidates === 0) return fill;
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
      messages.push([{ role: 'user', content: item.hookContext ? `${item.text}\n\n${hookContextSection(item.hookContext)}` : item.text }]);
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

