import type { ModelMessage } from '../../models/model-contract.js';
import type { TokenCounter } from './token-counter.js';

/**
 * What is kept of a sealed message: its JSON text and its token count per counter, computed on first use. A history
 * message is rendered once and then shared, unchanged, by every later round's input: serialising and counting it
 * once is what keeps a round's cost with what is new (issue 26, decision 3).
 */
interface MessageMemo {
  json?: string;
  tokens?: Map<TokenCounter, number>;
}

const memos = new WeakMap<ModelMessage, MessageMemo>();

/**
 * Seal a rendered message for sharing between rounds: it (and its tool-call list and calls) is frozen, so its text
 * can be kept by identity. Returns the same object. Only sealed messages are memoised; any other message is
 * serialised and counted afresh every time.
 */
export const sealMessage = <Message extends ModelMessage>(message: Message): Message => {
  if (message.role === 'assistant' && message.toolCalls) {
    for (const call of message.toolCalls) Object.freeze(call);
    Object.freeze(message.toolCalls);
  }
  Object.freeze(message);
  memos.set(message, {});
  return message;
};

/** `JSON.stringify(message)`, once per sealed message. */
export const messageJson = (message: ModelMessage): string => {
  const memo = memos.get(message);
  if (memo === undefined) return JSON.stringify(message);
  return (memo.json ??= JSON.stringify(message));
};

/** `JSON.stringify(messages)`, with each sealed message's text serialised once (an array's JSON is its items' joined by commas). */
export const messagesJson = (messages: readonly ModelMessage[]): string => {
  const parts = new Array<string>(messages.length);
  for (let index = 0; index < messages.length; index++) parts[index] = messageJson(messages[index]!);
  return `[${parts.join(',')}]`;
};

const countMessage = (message: ModelMessage, counter: TokenCounter): number =>
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
