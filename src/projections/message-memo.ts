import type { ModelMessage } from '../../models/model-contract.js';
import type { TokenCounter } from './token-counter.js';
import type { BlobPiece } from '../../stores/prefix-blob-hasher.js';

/**
 * What is kept of a sealed message: its JSON text and its token count per counter, computed on first use. A history
 * message is rendered once and then shared, unchanged, by every later round's input: serialising and counting it
 * once is what keeps a round's cost with what is new (issue 26, decision 3).
 */
interface MessageMemo {
  json?: string;
  /** A system message's JSON in two parts, the first shared by every agent whose message starts with the same head (`sealSystemMessage`). */
  parts?: readonly [string, string];
  tokens?: Map<TokenCounter, number>;
}

const memos = new WeakMap<ModelMessage, MessageMemo>();

/**
 * Seal a rendered message for sharing between rounds: it (and its tool-call list and calls) is frozen, so its text
 * can be kept by identity. Returns the same object. Only sealed messages are memoised; any other message is
 * serialised and counted afresh every time.
 */
export const sealMessage = <Message extends ModelMessage>(message: Message): Message => {
  freezeMessage(message);
  memos.set(message, {});
  return message;
};

/** Freeze a message, its tool-call list and its calls (shared between rounds: nothing may change them). */
export const freezeMessage = <Message extends ModelMessage>(message: Message): Message => {
  if (message.role === 'assistant' && message.toolCalls) {
    for (const call of message.toolCalls) Object.freeze(call);
    Object.freeze(message.toolCalls);
  }
  return Object.freeze(message);
};

/** `'{"role":"system","content":"'` and the JSON-escaped head, by head: one string for every agent sharing the head. */
const openings = new Map<string, string>();

/** A JSON string's text without its quotes: what the string adds inside a longer JSON string. */
const escaped = (text: string): string => {
  const json = JSON.stringify(text);
  return json.slice(1, json.length - 1);
};

/**
 * Seal the system message `content`, which is `head + rest` (`head` a string every agent of a session shares: rules,
 * environment, instructions): its JSON is kept as the head's opening, shared, and the rest's part, this message's own.
 * A child agent's input then holds its goal and task, not another copy of the rules (a thousand idle children held
 * ~7 KB of JSON each). The parts join to exactly `JSON.stringify({ role: 'system', content })`. `content` is not read
 * here (reading a concatenation flattens it into a copy of the head).
 */
export const sealSystemMessage = (content: string, head: string, rest: string): ModelMessage => {
  const message = sealMessage<ModelMessage>({ role: 'system', content });
  const last = head.charCodeAt(head.length - 1);
  const first = rest.charCodeAt(0);
  // Escaping is per character, so the JSON splits where the text does — unless that cuts a surrogate pair.
  if (head.length === 0 || content.length !== head.length + rest.length || (last >= 0xd800 && last <= 0xdbff && first >= 0xdc00 && first <= 0xdfff)) return message;
  let opening = openings.get(head);
  if (opening === undefined) {
    if (openings.size >= 16) openings.clear();
    opening = `{"role":"system","content":"${escaped(head)}`;
    openings.set(head, opening);
  }
  memos.get(message)!.parts = [opening, `${escaped(rest)}"}`];
  return message;
};

/** A sealed message's JSON as the pieces `inputPieces` hands the hasher: its two parts, or its whole JSON. */
const jsonPieces = (message: ModelMessage): readonly string[] | string => memos.get(message)?.parts ?? messageJson(message);

/** `JSON.stringify(message)`, once per sealed message (a system message sealed in two parts is joined each time). */
export const messageJson = (message: ModelMessage): string => {
  const memo = memos.get(message);
  if (memo === undefined) return JSON.stringify(message);
  if (memo.parts) return memo.parts[0] + memo.parts[1];
  return (memo.json ??= JSON.stringify(message));
};

/** `JSON.stringify(messages)`, with each sealed message's text serialised once (an array's JSON is its items' joined by commas). */
export const messagesJson = (messages: readonly ModelMessage[]): string => {
  const parts = new Array<string>(messages.length);
  for (let index = 0; index < messages.length; index++) parts[index] = messageJson(messages[index]!);
  return `[${parts.join(',')}]`;
};

/** A message's tokens as `countInput` counts them: its content, its tool calls' JSON, and 4 for framing. */
export const countMessage = (message: ModelMessage, counter: TokenCounter): number =>
  counter.count(message.content) + (message.role === 'assistant' && message.toolCalls ? counter.count(JSON.stringify(message.toolCalls)) : 0) + 4;

/** A message's tokens as `countInput` counts them (content, tool calls, 4 for framing), once per sealed message and counter. */
export const messageTokens = (message: ModelMessage, counter: TokenCounter): number => {
  const memo = memos.get(message);
  if (memo === undefined) return countMessage(message, counter);
  const tokens = (memo.tokens ??= new Map());
  let count = tokens.get(counter);
  if (count === undefined) {
    count = countMessage(message, counter);
    tokens.set(counter, count);
  }
  return count;
};

/**
 * What a rendered history's messages add up to: their `countInput` tokens for one counter, and their JSON (`jsons`,
 * whose first entries are theirs: a list only appended to while the history grows from the same start) — kept as the
 * history grows, so that counting and storing an input cost what is new in it, not its whole history.
 */
export interface HistoryText {
  inputTokens: number;
  counter: TokenCounter;
  jsons: readonly string[];
}

/**
 * The input last assembled with a history (one slot: the model call stores the input it just projected, with nothing
 * in between): its messages from `start` are the history's `count` messages, whose text is `text`. A slot instead of a
 * map keyed by each round's new lists: a WeakMap entry costs microseconds of CPU and GC every round.
 */
let lastAssembled: { messages: readonly ModelMessage[]; start: number; count: number; text: HistoryText } | undefined;

/** Note where the history lies in an assembled input (see `lastAssembled`). */
export const noteAssembledHistory = (messages: readonly ModelMessage[], start: number, count: number, text: HistoryText | undefined): void => {
  lastAssembled = text === undefined || count === 0 ? undefined : { messages, start, count, text };
};

const historyOf = (messages: readonly ModelMessage[]): { start: number; count: number; text: HistoryText } | undefined => {
  const placed = lastAssembled;
  if (placed === undefined || placed.messages !== messages || messages.length < placed.start + placed.count) return undefined;
  return placed;
};

/**
 * `JSON.stringify({ messages, tools })` — the model input as stored — as pieces whose concatenation it is, and how
 * many of them lie within the first `stableMessages` messages (the input's stable prefix: what `PrefixBlobHasher`
 * keeps from round to round). A history within the prefix is one growing piece (its kept JSON list, see
 * `HistoryText`); any other sealed message's piece is its kept JSON, the same string every round, so the prefix
 * compares by identity; the separators are constants.
 */
export const inputPieces = (messages: readonly ModelMessage[], toolsJson: string, stableMessages: number): { pieces: BlobPiece[]; stable: number } => {
  const kept = Math.max(0, Math.min(stableMessages, messages.length));
  const history = historyOf(messages);
  const inPrefix = history !== undefined && history.start + history.count <= kept && history.text.jsons.length >= history.count;
  const pieces: BlobPiece[] = ['{"messages":['];
  let stable = kept === 0 ? 1 : 0;
  for (let index = 0; index < messages.length; index++) {
    if (index > 0) pieces.push(',');
    if (inPrefix && index === history.start) {
      pieces.push({ parts: history.text.jsons, count: history.count, separator: ',' });
      index += history.count - 1;
    } else {
      const json = jsonPieces(messages[index]!);
      if (typeof json === 'string') pieces.push(json);
      else pieces.push(...json);
    }
    if (index === kept - 1) stable = pieces.length;
  }
  pieces.push('],"tools":', toolsJson, '}');
  return { pieces, stable };
};

/** The tokens of an assembled input's messages as `countInput` counts them: its history's as kept, the others counted now. */
export const inputMessagesTokens = (messages: readonly ModelMessage[], counter: TokenCounter): number => {
  const history = historyOf(messages);
  let sum = 0;
  if (history === undefined || history.text.counter !== counter) {
    for (const message of messages) sum += messageTokens(message, counter);
    return sum;
  }
  for (let index = 0; index < history.start; index++) sum += messageTokens(messages[index]!, counter);
  sum += history.text.inputTokens;
  for (let index = history.start + history.count; index < messages.length; index++) sum += messageTokens(messages[index]!, counter);
  return sum;
};
