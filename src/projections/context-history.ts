import type { ContextCompaction, ContextExclusion, ContextInclusion } from '../../models/context.records.js';
import type { ModelMessage } from '../../models/model-contract.js';
import { toArray } from './persistent-list.js';
import { countOlder, type ActorContext, type ConversationItem, type EvidenceItem, type OlderItems, type ToolResultItem } from './context.view.js';
import { attribute, fitText, quoteUntrusted } from './context-render.js';
import { hookContextSection, renderedTurn, turnMode } from './context-sources.js';
import { callSummary } from './call-summary.js';
import type { TokenCounter } from './token-counter.js';
import { countMessage, freezeMessage, type HistoryText } from './message-memo.js';

/**
 * Where the history shown in full starts: an index into the actor's recent items, or undefined when the recorded
 * start (`from`, a seq) is no longer held in full (the view counted it among the older items). `from` 0 means the
 * start of the conversation, which holds only while nothing has been counted away.
 */
export const anchorIndexOf = (actor: ActorContext, from: number): number | undefined => {
  if (from === 0) return actor.older.items === 0 ? 0 : undefined;
  // Seqs only grow along the items (two items of one record share one): the first at `from`, by halving.
  const recent = actor.recent;
  let low = 0;
  let high = recent.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (recent[middle]!.seq < from) low = middle + 1;
    else high = middle;
  }
  return low < recent.length && recent[low]!.seq === from ? low : undefined;
};

/** Whether the history may start at `index`: not between two items of one record (a reply and the harness's note on it). */
export const isBoundary = (actor: ActorContext, index: number): boolean => index === 0 || actor.recent[index - 1]!.seq < actor.recent[index]!.seq;

/** The seq a history starting at `index` is recorded by (0 for the very start). */
export const fromOf = (actor: ActorContext, index: number): number => (index === 0 && actor.older.items === 0 ? 0 : (actor.recent[index]?.seq ?? 0));

/** The conversation from the anchor on, every tool result rendered at `cap` tokens: what the model reads in full. */
export interface RenderedHistory {
  /** The history's messages: frozen and shared with the rounds before and after. */
  messages: ModelMessage[];
  /** Tokens of the turns (user messages are counted with the goal). */
  tokens: number;
  /** Ledger entries: the latest tool turn as `latest_observation`, the other turns as `recent_tail`. */
  included: ContextInclusion[];
  /** Whether some tool result was cut to `cap` (an excerpt with a reference to the full output). */
  cut: boolean;
  /** The messages' tokens and JSON as kept (absent for an empty history, or messages changed after rendering). */
  text?: HistoryText;
}

/**
 * The history as last rendered from one anchor item: per item, where its messages, ledger entry, tokens and cut end.
 * The next round's history from the same anchor starts with the same items (the history only grows, and a settling
 * result replaces only the last turns), so it keeps the common prefix and renders only what follows it.
 */
interface HistoryMemo {
  cap: number;
  counter: TokenCounter;
  /** The actor last rendered from it (a forked child shares its parent's items) and its `edits.count` then. */
  actor: string;
  edits: number;
  /**
   * What identifies each item rendered (seq, and a turn's results list or a user message's text: a turn is replaced
   * only when a result settles, which makes a new list). Not the items themselves: an item may be another memo's
   * anchor, and holding items would chain the memos of every compaction through the whole session (a heap leak).
   */
  seqs: number[];
  marks: unknown[];
  messages: ModelMessage[];
  /** `recent_tail` entries of the turns (user messages have none). */
  tails: ContextInclusion[];
  messageEnds: number[];
  tailEnds: number[];
  tokenSums: number[];
  cutAfter: boolean[];
  /** The messages' tokens as `countInput` counts them, up to each item. */
  inputSums: number[];
  /**
   * Each message's JSON, in order: only appended to while the memo's items stay (a truncation makes a new array), so
   * the stored model input's hasher takes the history as a growing piece (`inputPieces`).
   */
  jsons: string[];
}

const historyMemos = new WeakMap<ConversationItem, HistoryMemo>();

/** What tells an item from another with the same seq: a turn's results list (new when one settles), a user message's text. */
const markOf = (item: ConversationItem): unknown => (item.kind === 'turn' ? item.results : item.text);

const tailReason = 'history since the last compaction, appended in order';

/** A frozen ledger entry (entries are shared between rounds; nothing may change them). */
const frozenEntry = (entry: ContextInclusion): ContextInclusion => {
  Object.freeze(entry.refs);
  return Object.freeze(entry);
};

/** Append one item's rendering to the memo. */
const renderInto = (memo: HistoryMemo, item: ConversationItem): void => {
  const index = memo.seqs.length;
  const tokensBefore = index === 0 ? 0 : memo.tokenSums[index - 1]!;
  const cutBefore = index === 0 ? false : memo.cutAfter[index - 1]!;
  memo.seqs.push(item.seq);
  memo.marks.push(markOf(item));
  if (item.kind === 'user') {
    // User messages are counted with the goal (never trimmed, wherever they are placed).
    memo.messages.push(freezeMessage({ role: 'user', content: item.hookContext ? `${item.text}\n\n${hookContextSection(item.hookContext)}` : item.text }));
    memo.tokenSums.push(tokensBefore);
    memo.cutAfter.push(cutBefore);
  } else {
    // The turn's kept rendering, shared as it is (frozen): no copy, and no per-message memo either — the memo
    // keeps each message's JSON and tokens in its own lists (`jsons`, `inputSums`), which is all a round reads.
    const rendered = renderedTurn(item, memo.cap, memo.counter);
    const mode = turnMode(rendered.modes);
    for (const message of rendered.messages) memo.messages.push(message);
    memo.tokenSums.push(tokensBefore + rendered.tokens);
    memo.cutAfter.push(cutBefore || mode !== 'full');
    const refs = [`#${item.seq}`, ...item.results.map((result) => `#${result.seq}`)];
    memo.tails.push(frozenEntry({ source: 'recent_tail', refs, mode, trust: 'untrusted', tokens: rendered.tokens, reason: tailReason }));
  }
  // The item's messages as `countInput` counts them: a turn's rendering counted exactly that (its text, its calls'
  // JSON and each result, 4 each for framing), a user message is its content and 4.
  const inputBefore = index === 0 ? 0 : memo.inputSums[index - 1]!;
  memo.inputSums.push(inputBefore + (item.kind === 'user' ? countMessage(memo.messages[memo.messages.length - 1]!, memo.counter) : memo.tokenSums[index]! - tokensBefore));
  for (let message = index === 0 ? 0 : memo.messageEnds[index - 1]!; message < memo.messages.length; message++) memo.jsons.push(JSON.stringify(memo.messages[message]!));
  memo.messageEnds.push(memo.messages.length);
  memo.tailEnds.push(memo.tails.length);
};

/** Keep the memo's first `count` items only. */
const truncateMemo = (memo: HistoryMemo, count: number): void => {
  memo.seqs.length = count;
  memo.marks.length = count;
  memo.messages.length = count === 0 ? 0 : memo.messageEnds[count - 1]!;
  memo.tails.length = count === 0 ? 0 : memo.tailEnds[count - 1]!;
  memo.messageEnds.length = count;
  memo.tailEnds.length = count;
  memo.tokenSums.length = count;
  memo.cutAfter.length = count;
  memo.inputSums.length = count;
  // A new array: whoever holds the old one (a hasher's kept prefix) sees it is another list, not a longer one.
  memo.jsons = memo.jsons.slice(0, memo.messages.length);
};

/**
 * How many of the memo's items the actor still holds as they were, told by its edits rather than compared one by one:
 * the same actor, at most `keptEdits` replacements since the memo's render: every item rendered then is unchanged but
 * the replaced ones, and the shared prefix ends at the first of them (its last item is still compared: a guard).
 * Undefined when the edits cannot tell (another actor, an older state, too many replacements): compare item by item.
 */
const sharedByEdits = (memo: HistoryMemo, actor: ActorContext, recent: readonly ConversationItem[], anchorIndex: number, limit: number): number | undefined => {
  if (memo.actor !== actor.actor) return undefined;
  const edits = actor.edits;
  const since = (edits?.count ?? 0) - memo.edits;
  if (since < 0 || since > (edits?.seqs.length ?? 0)) return undefined;
  let shared = limit;
  if (edits !== undefined) {
    for (let index = edits.seqs.length - since; index < edits.seqs.length; index++) {
      // Seqs only grow along the items (a reply and the harness's note on it share one): the rendering may differ
      // from the first item at or after the replaced one's seq (found from the end: it is mostly the last turn).
      const seq = edits.seqs[index]!;
      while (shared > 0 && memo.seqs[shared - 1]! >= seq) shared--;
    }
  }
  if (shared === 0) return 0;
  const last = recent[anchorIndex + shared - 1]!;
  return memo.seqs[shared - 1] === last.seq && memo.marks[shared - 1] === markOf(last) ? shared : undefined;
};

/**
 * Render the history from `anchorIndex`: user messages verbatim (with the hook context they carry, untrusted), each
 * turn as its assistant message and one tool message per call. Incremental: the rendering from the same anchor item
 * at the same cap is kept, and a round renders only the items after the longest prefix it shares with the last one
 * (a pointer comparison per item), so a history that only grows keeps its prefix — the same bytes, the same message
 * objects — and costs per round what is new. The result equals a rendering from scratch.
 */
export const renderHistory = (actor: ActorContext, anchorIndex: number, cap: number, counter: TokenCounter): RenderedHistory => {
  const recent = actor.recent;
  const count = recent.length - anchorIndex;
  if (count <= 0) return { messages: [], tokens: 0, included: [], cut: false };
  const anchor = recent[anchorIndex]!;
  let memo = historyMemos.get(anchor);
  if (memo === undefined || memo.cap !== cap || memo.counter !== counter) {
    memo = { cap, counter, actor: actor.actor, edits: actor.edits?.count ?? 0, seqs: [], marks: [], messages: [], tails: [], messageEnds: [], tailEnds: [], tokenSums: [], cutAfter: [], inputSums: [], jsons: [] };
    historyMemos.set(anchor, memo);
  }
  const limit = Math.min(count, memo.seqs.length);
  let shared = sharedByEdits(memo, actor, recent, anchorIndex, limit);
  if (shared === undefined) {
    shared = 0;
    while (shared < limit && memo.seqs[shared] === recent[anchorIndex + shared]!.seq && memo.marks[shared] === markOf(recent[anchorIndex + shared]!)) shared++;
  }
  memo.actor = actor.actor;
  memo.edits = actor.edits?.count ?? 0;
  if (shared < memo.seqs.length) truncateMemo(memo, shared);
  for (let index = shared; index < count; index++) renderInto(memo, recent[anchorIndex + index]!);
  const last = recent[recent.length - 1]!;
  const included = memo.tails.slice();
  if (last.kind === 'turn' && last.toolCalls.length > 0) {
    // The latest tool turn is the latest observation (its entry says so; its tokens and mode are the tail's).
    const tail = included[included.length - 1]!;
    included[included.length - 1] = { source: 'latest_observation', refs: tail.refs, mode: tail.mode, trust: 'untrusted', tokens: tail.tokens, reason: tail.mode === 'full' ? 'the latest tool results, in full' : 'the latest tool results, each cut to the per-result cap with a reference to the full output' };
  }
  const messages = memo.messages.slice();
  return { messages, tokens: memo.tokenSums[count - 1]!, included, cut: memo.cutAfter[count - 1]!, text: { inputTokens: memo.inputSums[count - 1]!, counter, jsons: memo.jsons } };
};

/** The history summary: what stands in for the items before the anchor. */
export interface RenderedSummary {
  section: string;
  tokens: number;
  listed: number;
  included: ContextInclusion[];
  excluded: ContextExclusion[];
  compacted: ContextCompaction[];
}

const summaryLines = new WeakMap<ConversationItem, string>();

/** One line for an item (rendered once per item: items are immutable). */
const summaryLine = (item: ConversationItem): string => {
  let line = summaryLines.get(item);
  if (line === undefined) {
    if (item.kind === 'user') line = `#${item.seq} user message (kept in full under earlier-user-messages)`;
    else {
      const text = item.text.replace(/\s+/g, ' ').trim();
      const said = text ? `"${text.length > 80 ? `${text.slice(0, 79)}…` : text}"` : '(no text)';
      const calls = item.toolCalls.map((call) => callSummary(call, item.results.find((candidate) => candidate.callId === call.callId)));
      line = `#${item.seq} turn ${item.turn}: ${said}${calls.length > 0 ? ` → ${calls.join(', ')}` : ''}`;
    }
    summaryLines.set(item, line);
  }
  return line;
};

const countsLine = (counted: OlderItems): string => {
  const calls = Object.entries(counted.calls)
    .sort(([left], [right]) => (left < right ? -1 : 1))
    .map(([name, counts]) => `${name} ok×${counts.ok}${counts.error ? ` error×${counts.error}` : ''}`);
  return `earlier: ${counted.turns} turns and ${counted.users} user messages (#${counted.firstSeq}..#${counted.lastSeq})${calls.length > 0 ? `: ${calls.join(', ')}` : ''}`;
};

/**
 * Summarise the items before the anchor in at most `budget` tokens: the newest ones one line each (at most
 * `maxLines`, or exactly `listed` when a recorded layout says how many), the rest as one line of counts, and the user
 * constraints in force then. The rendering depends only on which items lie before the anchor — not on how many of
 * them the view still holds in full — so it stays the same while the history after the anchor grows. Undefined when
 * `listed` names more items than the view still holds.
 */
type SummaryOptions = { from: number; budget: number; maxLines: number; listed?: number; counter: TokenCounter };

/** The summary last rendered before one anchor item, with everything it was rendered from (compared by identity). */
interface SummaryMemo {
  /**
   * What identifies the items before the anchor then, oldest first: kind, seq and (a turn) its results list — a turn
   * is replaced only when a result settles, which makes a new list. Not the items themselves: an item may be the
   * anchor of another memo, and holding items would chain memos back through the whole session (a heap leak).
   */
  kinds: Array<'user' | 'turn'>;
  seqs: number[];
  results: Array<readonly ToolResultItem[] | undefined>;
  /** Where the items before the anchor start in those lists (the ones before `start` were evicted since). */
  start: number;
  /** The actor it was rendered for and its `edits.count` then (`unchangedBefore`). */
  actor: string;
  edits: number;
  anchorIndex: number;
  older: OlderItems;
  constraints: ActorContext['constraints'];
  options: SummaryOptions;
  summary: RenderedSummary | undefined;
}

const summaryMemos = new WeakMap<object, SummaryMemo>();

const sameOlder = (left: OlderItems, right: OlderItems): boolean => {
  if (left === right) return true;
  if (left.items !== right.items || left.turns !== right.turns || left.users !== right.users || left.firstSeq !== right.firstSeq || left.lastSeq !== right.lastSeq) return false;
  const names = Object.keys(left.calls);
  if (names.length !== Object.keys(right.calls).length) return false;
  return names.every((name) => left.calls[name]!.ok === right.calls[name]?.ok && left.calls[name]!.error === right.calls[name]?.error);
};

/**
 * Whether the items before the anchor are the memo's (from `start`), told by the actor's edits instead of compared
 * one by one: the same actor, at most `keptEdits` replacements since, none of them at or before the anchor's seq —
 * items before the anchor are then the memo's but those evicted since (its last one still compared: a guard).
 */
const unchangedBefore = (memo: SummaryMemo, actor: ActorContext, anchorIndex: number, start: number): boolean => {
  if (memo.actor !== actor.actor) return false;
  const edits = actor.edits;
  const since = (edits?.count ?? 0) - memo.edits;
  if (since < 0 || since > (edits?.seqs.length ?? 0)) return false;
  const anchor = actor.recent[anchorIndex];
  if (since > 0) {
    if (anchor === undefined) return false;
    for (let index = edits!.seqs.length - since; index < edits!.seqs.length; index++) if (edits!.seqs[index]! <= anchor.seq) return false;
  }
  if (memo.kinds.length - start !== anchorIndex) return false;
  if (anchorIndex === 0) return true;
  const last = actor.recent[anchorIndex - 1]!;
  const at = start + anchorIndex - 1;
  return memo.seqs[at] === last.seq && memo.kinds[at] === last.kind && memo.results[at] === (last.kind === 'turn' ? last.results : undefined);
};

/**
 * Whether the items before the anchor are the ones the memo was rendered from: the same items (by identity), or — with
 * a recorded number of listed lines — the same ones after the oldest of them were counted away into `older` (the view
 * evicts one per new item once full): the summary lists the newest `listed` and counts the rest wherever they are
 * held, so it renders the same bytes.
 */
const sameSummaryInput = (memo: SummaryMemo, actor: ActorContext, anchorIndex: number, options: SummaryOptions): boolean => {
  const kept = memo.options;
  if (memo.constraints !== actor.constraints) return false;
  if (kept.from !== options.from || kept.budget !== options.budget || kept.maxLines !== options.maxLines || kept.listed !== options.listed || kept.counter !== options.counter) return false;
  const dropped = memo.anchorIndex - anchorIndex;
  if (dropped < 0 || (dropped > 0 && (options.listed === undefined || options.listed > anchorIndex))) return false;
  const start = memo.start + dropped;
  if (!unchangedBefore(memo, actor, anchorIndex, start)) {
    for (let index = 0; index < anchorIndex; index++) {
      const item = actor.recent[index]!;
      if (memo.seqs[start + index] !== item.seq || memo.kinds[start + index] !== item.kind || memo.results[start + index] !== (item.kind === 'turn' ? item.results : undefined)) return false;
    }
  }
  if (dropped === 0) return memo.older === actor.older || sameOlder(memo.older, actor.older);
  let counted = memo.older;
  for (let index = memo.start; index < start; index++) {
    // countOlder reads an item's kind, seq and (a turn) results: what the memo kept of it.
    const kept = { kind: memo.kinds[index]!, seq: memo.seqs[index]!, results: memo.results[index] ?? [] } as unknown as ConversationItem;
    counted = countOlder(counted, kept);
  }
  return sameOlder(counted, actor.older);
};

/**
 * Summarise the items before the anchor (`renderSummaryOnce`), kept per anchor item: while the same items lie before
 * it (`sameSummaryInput`) with the same constraints and budgets, the last rendering is returned as it was — a round
 * whose history only grew renders no summary again.
 */
export const renderSummary = (actor: ActorContext, anchorIndex: number, options: SummaryOptions): RenderedSummary | undefined => {
  const key: object = actor.recent[anchorIndex] ?? actor.older;
  const memo = summaryMemos.get(key);
  if (memo !== undefined && sameSummaryInput(memo, actor, anchorIndex, options)) {
    // The same items before the anchor but those evicted since: the memo now starts after them (no new lists).
    memo.start += memo.anchorIndex - anchorIndex;
    memo.anchorIndex = anchorIndex;
    memo.older = actor.older;
    memo.actor = actor.actor;
    memo.edits = actor.edits?.count ?? 0;
    return memo.summary;
  }
  const summary = renderSummaryOnce(actor, anchorIndex, options);
  const kinds: SummaryMemo['kinds'] = [];
  const seqs: number[] = [];
  const results: SummaryMemo['results'] = [];
  for (let index = 0; index < anchorIndex; index++) {
    const item = actor.recent[index]!;
    kinds.push(item.kind);
    seqs.push(item.seq);
    results.push(item.kind === 'turn' ? item.results : undefined);
  }
  summaryMemos.set(key, { kinds, seqs, results, start: 0, actor: actor.actor, edits: actor.edits?.count ?? 0, anchorIndex, older: actor.older, constraints: actor.constraints, options: { ...options }, summary });
  return summary;
};

const renderSummaryOnce = (actor: ActorContext, anchorIndex: number, options: SummaryOptions): RenderedSummary | undefined => {
  const before = actor.recent.slice(0, anchorIndex);
  const none: RenderedSummary = { section: '', tokens: 0, listed: 0, included: [], excluded: [], compacted: [] };
  if (before.length === 0 && actor.older.items === 0) return none;
  if (options.listed !== undefined && options.listed > before.length) return undefined;
  const { counter, budget } = options;
  const constraints = toArray(actor.constraints).filter((constraint) => constraint.seq < options.from);
  const keeps = constraints.map((constraint) => ({ ref: `#${constraint.seq}`, text: constraint.text, prohibition: constraint.prohibition }));
  const keepsLine = constraints.length > 0 ? `user constraints still in force (verbatim under user-constraints): ${constraints.map((constraint) => `#${constraint.seq}`).join(', ')}` : '';
  const total = before.length + actor.older.items;
  const first = actor.older.items > 0 ? actor.older.firstSeq : before[0]!.seq;
  const last = before.length > 0 ? before[before.length - 1]!.seq : actor.older.lastSeq;
  const refs = [first === last ? `#${first}` : `#${first}..#${last}`];
  const header = `<history-summary replaces="${refs[0]}" trust="fact">\n[${total} earlier items are summarised here; the log keeps them in full (rein context, rein show)]`;
  const footer = '</history-summary>';
  const framing = counter.count(header) + counter.count(footer) + (keepsLine ? counter.count(keepsLine) + 1 : 0);
  // Lines newest first while they fit (with room kept for the counts line, whose length is bounded), unless recorded.
  const lines: string[] = [];
  let tokens = framing + 40;
  const wanted = options.listed ?? Math.min(options.maxLines, before.length);
  for (let index = before.length - 1; index >= 0 && lines.length < wanted; index--) {
    const line = summaryLine(before[index]!);
    const cost = counter.count(line) + 1;
    if (options.listed === undefined && tokens + cost > budget) break;
    tokens += cost;
    lines.unshift(line);
  }
  let counted = actor.older;
  for (const item of before.slice(0, before.length - lines.length)) counted = countOlder(counted, item);
  const body = [header, ...(counted.items > 0 ? [countsLine(counted)] : []), ...lines, ...(keepsLine ? [keepsLine] : []), footer];
  const section = body.join('\n');
  const sectionTokens = counter.count(section);
  if (options.listed === undefined && sectionTokens > budget) {
    return { ...none, excluded: [{ source: 'history_summary', refs, count: total, reason: 'budget', detail: `the summary needs ${sectionTokens} tokens; ${budget} were left` }] };
  }
  return {
    section,
    tokens: sectionTokens,
    listed: lines.length,
    included: [{ source: 'history_summary', refs, mode: 'summary', trust: 'fact', tokens: sectionTokens, reason: `${total} items before the history, newest ${lines.length} listed one line each` }],
    excluded: [{ source: 'recent_tail', refs, count: total, reason: 'beyond-tail', detail: 'summarised in the history summary' }],
    compacted: [{ summaryId: `summary:${refs.join(',')}`, replaces: refs, count: total, keeps, reason: 'before the history shown in full (moved when it no longer fit)' }],
  };
};

/** Evidence rendered for the session context: the reads pinned when the history last moved. */
export interface RenderedEvidence {
  section: string;
  tokens: number;
  pinned: number[];
  included: ContextInclusion[];
  excluded: ContextExclusion[];
  /** Candidates that were fresh and eligible (a starved source has some and shows none). */
  candidates: number;
}

/** Whether the file a read saw was changed after the read (the read is then stale and never shown again). */
const changedAfter = (actor: ActorContext, read: EvidenceItem): { seq: number } | undefined => actor.modified.find((entry) => entry.path === read.path && entry.seq > read.seq);

/**
 * Render reads as evidence within `budget` tokens, in the order given (newest first), each whole or cut to a share,
 * skipping stale ones; a read that does not fit ends the list. Deterministic in its items and budget, so a pinned
 * list renders the same bytes every round.
 */
export const renderEvidence = (actor: ActorContext, reads: readonly EvidenceItem[], budget: number, counter: TokenCounter): RenderedEvidence => {
  const included: ContextInclusion[] = [];
  const excluded: ContextExclusion[] = [];
  const sections: string[] = [];
  const pinned: number[] = [];
  let used = 0;
  let candidates = 0;
  let full = false;
  for (const read of reads) {
    const changed = changedAfter(actor, read);
    if (changed) {
      excluded.push({ source: 'evidence', refs: [`#${read.seq}`], count: 1, reason: 'stale', detail: `${read.path} was changed at #${changed.seq} after this read` });
      continue;
    }
    candidates++;
    const open = `<evidence source="read ${attribute(read.path)}" ref="#${read.seq}" trust="untrusted">`;
    const overhead = counter.count(open) + 8;
    const room = Math.min(budget - used, Math.max(300, Math.floor(budget / 2))) - overhead;
    const body = full || room < 40 ? undefined : fitText(read.observation, room, counter, `the full read is record #${read.seq}`);
    if (!body) {
      full = true;
      excluded.push({ source: 'evidence', refs: [`#${read.seq}`], count: 1, reason: 'budget', detail: `${read.path} did not fit the evidence budget` });
      continue;
    }
    const section = `${open}\n${quoteUntrusted(body.text)}\n</evidence>`;
    const tokens = counter.count(section);
    used += tokens;
    sections.push(section);
    pinned.push(read.seq);
    included.push({ source: 'evidence', refs: [`#${read.seq}`], mode: body.mode, trust: 'untrusted', tokens, reason: `last read of ${read.path} before the history; not changed since` });
  }
  return { section: sections.join('\n'), tokens: used, pinned, included, excluded, candidates };
};

/** The reads that may become evidence for a history starting at `from`: made before it, newest first, not shown in it. */
export const evidenceCandidates = (actor: ActorContext, from: number, shown: ReadonlySet<number>): EvidenceItem[] =>
  [...actor.reads].reverse().filter((read) => read.seq < from && !shown.has(read.seq));

/** The user messages before the anchor, kept verbatim in the session context (`#1 (the goal above)` for the goal). */
export const earlierUsersSection = (actor: ActorContext, from: number, goal: string | undefined): string => {
  const users = actor.users;
  if (users === undefined) return '';
  // Kept per list of user messages (persistent: a new message makes a new list), so an unchanged list is not walked again.
  const memo = earlierMemos.get(users);
  if (memo && memo.from === from && memo.goal === goal) return memo.section;
  const section = earlierUsersOnce(users, from, goal);
  earlierMemos.set(users, { from, goal, section });
  return section;
};

const earlierMemos = new WeakMap<NonNullable<ActorContext['users']>, { from: number; goal: string | undefined; section: string }>();

const earlierUsersOnce = (users: ActorContext['users'], from: number, goal: string | undefined): string => {
  const earlier = toArray(users).filter((user) => user.seq < from);
  if (earlier.length === 0) return '';
  const lines = earlier.map((user) => (user.text === goal ? `#${user.seq} (the goal above)` : `#${user.seq}: ${user.text}`));
  return `<earlier-user-messages trust="trusted">\n${lines.join('\n')}\n</earlier-user-messages>`;
};
