import type { ContextExclusion, ContextInclusion } from '../../models/context.records.js';
import { attribute, quoteUntrusted } from './context-render.js';
import { emptyFill, type Fill } from './context-sources.js';
import type { MemoryHints } from './memory-hints.js';
import type { TokenCounter } from './token-counter.js';

const describeHint = (hint: MemoryHints['hints'][number]): string => {
  const phrasing = hint.authority === 'rule' ? 'rule from long-term memory' : hint.authority === 'default' ? 'default from long-term memory; verify before relying on it' : 'hint: past sessions suggest this; verify before relying on it';
  return `- (${hint.scope.level} scope, ${hint.confidence} confidence, ${phrasing}) ${quoteUntrusted(hint.content)} [memory:${attribute(hint.recordId)}]`;
};

/** Memory hints: active, unexpired, in-scope, confident records (already filtered), phrased by their authority. */
export const memoryFill = (hints: MemoryHints, allowance: number, limit: number, counter: TokenCounter): Fill => {
  const governanceExclusions: ContextExclusion[] = hints.excluded.slice(0, 20).map(({ record, reason, detail }) => ({ source: 'memory', refs: [`memory:${record.recordId}`], count: 1, reason, ...(detail ? { detail } : {}) }));
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


/** A context candidate a `contextProject` hook offered (docs/capabilities.md: *Hooks*): the policy admits or refuses it. */
export interface HookCandidate {
  id: string;
  hookId: string;
  priority: number;
  content: string;
}

/**
 * Hook candidates: highest priority first (ties in the order the hooks ran), each whole or not at all, quoted as
 * untrusted data; a candidate that does not fit is excluded with reason `budget`. Hooks never write the prompt: this
 * is the only way their context gets in, and the ledger says what was admitted and what was refused.
 */
export const hookFill = (candidates: readonly HookCandidate[], allowance: number, counter: TokenCounter): Fill => {
  const ordered = candidates.map((candidate, index) => ({ candidate, index })).sort((left, right) => right.candidate.priority - left.candidate.priority || left.index - right.index);
  const refOf = (candidate: HookCandidate) => `hook:${candidate.hookId}/${candidate.id}`;
  const fill = emptyFill(candidates.length, (detail) => (candidates.length > 0 ? [{ source: 'hooks', refs: candidates.map(refOf), count: candidates.length, reason: 'priority', detail }] : []));
  if (candidates.length === 0) return fill;
  const included: ContextInclusion[] = [];
  const excluded: ContextExclusion[] = [];
  const sections: string[] = [];
  let used = 0;
  for (const { candidate } of ordered) {
    const section = `<hook-context hook="${attribute(candidate.hookId)}" id="${attribute(candidate.id)}" trust="untrusted">\n${quoteUntrusted(candidate.content)}\n</hook-context>`;
    const tokens = counter.count(section);
    if (used + tokens > allowance) {
      excluded.push({ source: 'hooks', refs: [refOf(candidate)], count: 1, reason: 'budget', detail: `${tokens} tokens did not fit the ${allowance - used} left for hook context` });
      continue;
    }
    used += tokens;
    sections.push(section);
    included.push({ source: 'hooks', refs: [refOf(candidate)], mode: 'full', trust: 'untrusted', tokens, reason: `offered by contextProject hook ${candidate.hookId} (priority ${candidate.priority})` });
  }
  return { ...fill, tokens: used, units: included.length, complete: excluded.length === 0, included, excluded, section: sections.join('\n') };
};
