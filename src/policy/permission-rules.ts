import type { PermissionAction, PermissionSource } from '../../models/permission.records.js';
import { ReinError } from '../host/host-errors.js';

/**
 * One permission rule: an action for a tool (or `*`), optionally narrowed by a pattern over the call's target
 * (the workspace-relative path of a file tool, the command of `bash`). In patterns `*` matches any run of
 * characters (slashes and spaces included) and `?` one character; `\*`, `\?` and `\\` stand for a literal `*`, `?` and
 * `\` (a backslash before anything else is itself); everything else matches itself. A pattern whose every `*` and `?`
 * is escaped names one exact target (`bash:rm -f \*` is the command `rm -f *` and nothing else).
 */
export interface PermissionRule {
  action: PermissionAction;
  tool: string;
  pattern?: string;
  /** Who made the rule: configuration (`rule`), a session grant (`session`) or an answer given in advance (`pre-approved`). */
  source?: PermissionSource;
}

/** A rule written as text: `[allow|ask|deny] <tool>[:<pattern>]`, e.g. `deny bash:git push*`, or `write` with a default action. */
export const parseRule = (text: string, defaultAction?: PermissionAction): PermissionRule => {
  const trimmed = text.trim();
  const spaced = /^(allow|ask|deny)\s+(.+)$/s.exec(trimmed);
  // The pattern admits the three actions only (no zod here: `rein sessions` judges outcomes with these helpers).
  const action = spaced ? (spaced[1] as PermissionAction) : defaultAction;
  const body = spaced ? spaced[2]!.trim() : trimmed;
  if (!action) throw new ReinError('USAGE', `permission rule ${JSON.stringify(text)} needs an action: allow, ask or deny`);
  const colon = body.indexOf(':');
  const tool = (colon === -1 ? body : body.slice(0, colon)).trim();
  const pattern = colon === -1 ? undefined : body.slice(colon + 1).trim();
  if (!/^[A-Za-z0-9_.*?-]+$/.test(tool)) throw new ReinError('USAGE', `permission rule ${JSON.stringify(text)}: ${JSON.stringify(tool)} is not a tool name (or a glob of tool names such as mcp__fs__*)`);
  if (pattern !== undefined && pattern.length === 0) throw new ReinError('USAGE', `permission rule ${JSON.stringify(text)} has an empty pattern`);
  return { action, tool, ...(pattern === undefined ? {} : { pattern }) };
};

/** The rule as text without its action (`bash:npm test`), the form approvals suggest and grants record. */
export const ruleSubject = (rule: Pick<PermissionRule, 'tool' | 'pattern'>): string => (rule.pattern === undefined ? rule.tool : `${rule.tool}:${rule.pattern}`);

const patternCache = new Map<string, RegExp>();

/** The pattern read character by character: each piece is a literal character or a wildcard (`*`, `?`). */
const tokens = (pattern: string): Array<{ literal: string } | { wildcard: '*' | '?' }> => {
  const out: Array<{ literal: string } | { wildcard: '*' | '?' }> = [];
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern[index]!;
    const next = pattern[index + 1];
    if (character === '\\' && (next === '\\' || next === '*' || next === '?')) {
      out.push({ literal: next });
      index += 1;
    } else if (character === '*' || character === '?') out.push({ wildcard: character });
    else out.push({ literal: character });
  }
  return out;
};

const compile = (pattern: string): RegExp => {
  let compiled = patternCache.get(pattern);
  if (!compiled) {
    const source = tokens(pattern)
      .map((token) => ('wildcard' in token ? (token.wildcard === '*' ? '[\\s\\S]*' : '[\\s\\S]') : token.literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    compiled = new RegExp(`^${source}$`);
    if (patternCache.size > 1000) patternCache.clear();
    patternCache.set(pattern, compiled);
  }
  return compiled;
};

/** True when a pattern holds a wildcard (an unescaped `*` or `?`). */
export const hasWildcard = (pattern: string): boolean => tokens(pattern).some((token) => 'wildcard' in token);

/** True when a pattern has no wildcard: it names one exact target. */
export const isExactPattern = (pattern: string | undefined): pattern is string => pattern !== undefined && !hasWildcard(pattern);

/** What a pattern without wildcards names, its escapes undone (`rm -f \*` → `rm -f *`). */
export const patternLiteral = (pattern: string): string => tokens(pattern).map((token) => ('wildcard' in token ? token.wildcard : token.literal)).join('');

/**
 * The pattern that matches `text` and nothing else: `*` and `?` escaped, and a backslash escaped where it would
 * otherwise start an escape. `patternLiteral(literalPattern(text)) === text` for every text.
 */
export const literalPattern = (text: string): string => text.replace(/\\(?=[\\*?])|[*?]/g, '\\$&');

/** True when `pattern` matches the whole of `target`. */
export const patternMatches = (pattern: string, target: string): boolean => compile(pattern).test(target);

/** True when a rule's tool part is a glob (`*`, `mcp__fs__*`, `mcp__*__delete*`) rather than one tool's name. */
export const isToolGlob = (tool: string): boolean => /[*?]/.test(tool);

/** True when the rule's tool part names this tool, exactly or by glob. */
export const ruleNamesTool = (rule: Pick<PermissionRule, 'tool'>, tool: string): boolean => rule.tool === '*' || rule.tool === tool || (isToolGlob(rule.tool) && patternMatches(rule.tool, tool));

/** True when the rule covers this tool and (if it has a pattern) one of the targets. */
export const ruleMatches = (rule: PermissionRule, tool: string, targets: readonly string[]): boolean => {
  if (!ruleNamesTool(rule, tool)) return false;
  if (rule.pattern === undefined) return true;
  return targets.some((target) => patternMatches(rule.pattern!, target));
};
