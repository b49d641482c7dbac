import type { ModelMessage } from '../../models/model-contract.js';
import { noteAssembledHistory, sealMessage, sealSystemMessage, type HistoryText } from './message-memo.js';

/**
 * Sealed system and user messages by text: the stable head of an input (the system message, the session context, the
 * goal) is the same text round after round, so its message is the same sealed object, serialised and counted once
 * (`messageJson`, `messageTokens`). Bounded: cleared when it holds `headCapacity` texts of a role.
 */
const heads = { system: new Map<string, ModelMessage>(), user: new Map<string, ModelMessage>() };
const headCapacity = 64;

const headMessage = (role: 'system' | 'user', content: string, parts?: { head: string; rest: string }): ModelMessage => {
  const cache = heads[role];
  const kept = cache.get(content);
  if (kept !== undefined) return kept;
  if (cache.size >= headCapacity) cache.clear();
  const message = role === 'system' && parts !== undefined ? sealSystemMessage(content, parts.head, parts.rest) : sealMessage<ModelMessage>({ role, content });
  cache.set(content, message);
  return message;
};

/** The model input as messages, and where its stable parts end (the cache breakpoints). */
export interface AssembledInput {
  messages: ModelMessage[];
  /** Indexes of the messages that end a stable part: the system message, the session context, the history. */
  breakpoints: number[];
}

/**
 * Lay the input out so that what does not change comes first: the system message (rules, environment, goal,
 * constraints), then the session context (earlier user messages, the history summary and evidence, in one `user`
 * message; only once the history has been compacted), then the history in its original order (tool results always
 * directly follow the assistant message that called them), and last one `user` message with the parts that change
 * every round (`volatile`: the task state, memory hints, hook context) — unless the history ends with a reply the
 * model continues (`pause_turn`), which must stay last. The goal is sent as the first user message when no user
 * message precedes the first reply. The breakpoints name the last message of each stable part. `historyStable` is
 * how many of the history's first messages are rendered as they will be in later rounds (default: all); the ones
 * after it (a latest observation cut below the per-result cap to fit this round) are not cached, since the next
 * round renders them at the cap. `systemParts`: `system` as the head every agent of the session shares and the rest (its
 * JSON is then kept in two parts, the head's one string for all: `sealSystemMessage`).
 */
export const assembleMessages = (parts: { system: string; systemParts?: { head: string; rest: string }; goal: string | undefined; context: string; history: readonly ModelMessage[]; historyText?: HistoryText | undefined; historyStable?: number; volatile: readonly string[] }): AssembledInput => {
  const messages: ModelMessage[] = [headMessage('system', parts.system, parts.systemParts)];
  const breakpoints = [0];
  if (parts.context.length > 0) {
    messages.push(headMessage('user', parts.context));
    breakpoints.push(messages.length - 1);
  }
  const firstReply = parts.history.findIndex((message) => message.role !== 'user');
  const userFirst = messages.length > 1 || (parts.history.length > 0 && firstReply !== 0);
  if (!userFirst && parts.goal !== undefined) messages.push(headMessage('user', parts.goal));
  // Where the history lies, so its kept JSON and token count stand for its messages (`inputPieces`, `countInput`).
  noteAssembledHistory(messages, messages.length, parts.history.length, parts.historyText);
  const historyStart = messages.length;
  messages.push(...parts.history);
  const stable = Math.min(parts.history.length, parts.historyStable ?? parts.history.length);
  if (stable > 0) breakpoints.push(historyStart + stable - 1);
  const volatile = parts.volatile.filter((section) => section.length > 0);
  const continuing = messages[messages.length - 1]?.role === 'assistant';
  if (volatile.length > 0 && !continuing) {
    messages.push({ role: 'user', content: `<turn-context note="assembled by the harness for this round; it changes every round">\n${volatile.join('\n')}\n</turn-context>` });
  }
  return { messages, breakpoints };
};
