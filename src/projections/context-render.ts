import { keyLinePattern } from './key-lines.js';
import type { TokenCounter } from './token-counter.js';

const structuralTags = /<(\/?)(system-rules|goal|task|parent-summary|user-constraints|state|session-context|earlier-user-messages|history-summary|evidence|memory-hints|tool-output|hook-context|environment|turn-context|project-instructions)\b/gi;

/**
 * Quote untrusted text (tool output, file contents, memory): any tag that could open or close one of the context's
 * sections is defused (`<` becomes `&lt;`), so text inside an untrusted section can never end it early or pose as
 * a trusted section. Everything else is kept byte for byte.
 */
export const quoteUntrusted = (text: string): string => (text.includes('<') ? text.replace(structuralTags, '&lt;$1$2') : text);

/** An attribute value safe inside double quotes. */
export const attribute = (value: string): string => (attributeUnsafe.test(value) ? value.replace(/[\r\n]+/g, ' ').replace(/"/g, "'").replace(/</g, '&lt;') : value).slice(0, 200);

/** What `attribute` replaces (most names and ids hold none of it: they are kept as they are, without three passes). */
const attributeUnsafe = /[\r\n"<]/;

/** A fragment of text as it will be sent, with its token count and how much of the original it kept. */
export interface Rendered {
  text: string;
  tokens: number;
  mode: 'full' | 'excerpt' | 'reference';
}

const MAX_LINE = 500;

const pickLines = (lines: readonly string[], budget: number): Array<{ index: number; text: string }> => {
  const picked = new Map<number, string>();
  let used = 0;
  const take = (index: number): boolean => {
    if (picked.has(index)) return true;
    const line = lines[index]!;
    const text = line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line;
    if (used + text.length + 1 > budget) return false;
    picked.set(index, text);
    used += text.length + 1;
    return true;
  };
  const keyBudget = budget * 0.4;
  let keyLineSeen = false;
  for (let index = 0; index < lines.length && used < keyBudget; index++) {
    if (!keyLinePattern.test(lines[index]!)) continue;
    keyLineSeen = true;
    take(index);
  }
  // An excerpt that has room for other lines but not for any key line would hide the one fact that matters.
  if (keyLineSeen && picked.size === 0) return [];
  const headBudget = used + (budget - used) * 0.5;
  for (let index = 0; index < lines.length && used < headBudget; index++) if (!take(index)) break;
  for (let index = lines.length - 1; index >= 0; index--) if (!take(index)) break;
  return [...picked.entries()].sort(([left], [right]) => left - right).map(([index, text]) => ({ index, text }));
};

const renderPicked = (picked: ReadonlyArray<{ index: number; text: string }>, total: number, note: string): string => {
  const out: string[] = [];
  let next = 0;
  for (const { index, text } of picked) {
    if (index > next) out.push(`[… ${index - next} lines omitted …]`);
    out.push(text);
    next = index + 1;
  }
  if (next < total) out.push(`[… ${total - next} lines omitted …]`);
  out.push(`[excerpt: ${picked.length} of ${total} lines shown; ${note}]`);
  return out.join('\n');
};

/**
 * Fit `text` into `maxTokens`: the whole text if it fits; otherwise an excerpt that keeps the key lines (failures,
 * errors, assertions) first, then the head and the tail, marks every omission and ends with `note` (where the full
 * text lives); below a few dozen tokens, only a reference line.
 */
export const fitText = (text: string, maxTokens: number, counter: TokenCounter, note: string): Rendered => {
  const full = counter.count(text);
  if (full <= maxTokens) return { text, tokens: full, mode: 'full' };
  const lines = text.split('\n');
  const reference = `[${lines.length} lines not shown here; ${note}]`;
  const referenceTokens = counter.count(reference);
  if (maxTokens < referenceTokens + 24) return { text: reference, tokens: referenceTokens, mode: 'reference' };
  const charactersPerToken = text.length / Math.max(1, full);
  let budget = Math.floor((maxTokens - referenceTokens) * charactersPerToken);
  for (let attempt = 0; attempt < 4 && budget > 0; attempt++) {
    const picked = pickLines(lines, budget);
    if (picked.length === 0) break;
    const rendered = renderPicked(picked, lines.length, note);
    const tokens = counter.count(rendered);
    if (tokens <= maxTokens) return { text: rendered, tokens, mode: 'excerpt' };
    budget = Math.floor((budget * maxTokens * 0.9) / tokens);
  }
  return { text: reference, tokens: referenceTokens, mode: 'reference' };
};
