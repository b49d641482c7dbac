import { expect } from 'vitest';
import type { ModelMessage } from '../../models/model-contract.js';

/** Every assistant tool call is answered right after it, and every tool message answers the call before it. */
export const assertPaired = (messages: readonly ModelMessage[]): void => {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant' && message.toolCalls) {
      const answers = messages.slice(index + 1, index + 1 + message.toolCalls.length);
      expect(answers.map((answer) => (answer.role === 'tool' ? answer.callId : undefined))).toEqual(message.toolCalls.map((call) => call.callId));
    }
    if (message.role === 'tool') {
      let back = index - 1;
      while (back >= 0 && messages[back]!.role === 'tool') back--;
      const caller = messages[back];
      expect(caller?.role === 'assistant' && caller.toolCalls?.some((call) => call.callId === message.callId)).toBe(true);
    }
  }
};

