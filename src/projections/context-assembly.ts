import type { ModelMessage } from '../../models/model-contract.js';
import type { FixedBlocks } from './context-fixed.js';
import type { Fill } from './context-sources.js';

/**
 * Lay the sources out as chat messages: the system message (trusted sections), then one `user` message holding
 * the session context (earlier user messages verbatim, the history summary, evidence and memory hints, each in its
 * own labelled section), then the tail and the latest observation in their original order. Tool results always
 * directly follow the assistant message that called them.
 */
export const assembleMessages = (parts: { fixed: FixedBlocks; latest: Fill; tail: Fill; sections: readonly Fill[] }): ModelMessage[] => {
  const { fixed, latest, tail } = parts;
  const messages: ModelMessage[] = [{ role: 'system', content: fixed.system }];
  const earlier = fixed.users.filter((user) => !tail.shownSeqs.has(user.seq) && !latest.shownSeqs.has(user.seq));
  const earlierLines = earlier.map((user) => (user.text === fixed.goal ? `#${user.seq} (the goal above)` : `#${user.seq}: ${user.text}`));
  const sections = [
    ...(earlierLines.length > 0 ? [`<earlier-user-messages trust="trusted">\n${earlierLines.join('\n')}\n</earlier-user-messages>`] : []),
    ...parts.sections.map((fill) => fill.section).filter((section) => section.length > 0),
  ];
  if (sections.length > 0) {
    messages.push({ role: 'user', content: `<session-context note="assembled by the harness from the session log">\n${sections.join('\n')}\n</session-context>` });
  }
  messages.push(...tail.messages, ...latest.messages);
  if (!messages.some((message) => message.role === 'user') && fixed.goal !== undefined) messages.splice(1, 0, { role: 'user', content: fixed.goal });
  return messages;
};
