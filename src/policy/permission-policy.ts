import type { PermissionAction, PermissionMode, PermissionSource, ShellClass } from '../../models/permission.records.js';
import type { ApprovalOutcome } from '../../machines/permission.machine.js';
import type { ToolAnnotations, ToolRisk } from '../../models/tool-traits.js';
import { isExactPattern, isToolGlob, literalPattern, parseRule, patternLiteral, ruleMatches, ruleNamesTool, ruleSubject, type PermissionRule } from './permission-rules.js';
import { neverAutoAllowed } from './shell-classify.js';
import { denyCannotBeChecked, type CommandsRun } from './shell-commands.js';

/** How a harness decides permissions: a mode, rules (deny wins, then ask, then allow) and whether every ask is answered in advance. */
export interface PermissionsConfig {
  mode?: PermissionMode;
  /** Rules as objects or text (`deny bash:git push*`, `allow write:src/*`). */
  rules?: readonly (PermissionRule | string)[];
  /** Answer every `ask` with allow-once in advance (the CLI's `--yes`). Deny rules and the workspace boundary still hold. */
  approveAll?: boolean;
}

/** What the permission stage knows about a call: the rule target, the simple commands of a shell line and its classes. */
export interface PermissionSubject {
  target?: string;
  parts?: readonly string[];
  classes?: readonly ShellClass[];
  /** For a shell line: every command it may run, normalised (`/usr/bin/git push` → `git push`), and what it hides. */
  run?: CommandsRun;
  /** What an approval shows besides the target: an MCP call's arguments (short values, sizes and digests of long ones). */
  details?: string;
  /** For a shell line of several parts (a pipeline or list): each part, judged on its own (see `classifyForPermission`). */
  shellParts?: readonly ShellPart[];
}

/**
 * One simple command of a line of several (a pipeline or list part), as a judgement part by part sees it: its text as
 * a rule matches it (its words and the redirections that write), its classes where the line runs it, every command
 * it runs (through wrappers, variables the line assigned, `xargs`, `find -exec`, …) each with the classes it has
 * alone, and whether it runs a program rein cannot name.
 */
export interface ShellPart {
  text: string;
  classes: readonly ShellClass[];
  runs: ReadonlyArray<{ command: string; classes: readonly ShellClass[] }>;
  unknown: boolean;
}

/** The tool facts permission depends on. */
export interface PermissionTool {
  name: string;
  annotations: ToolAnnotations;
  risk: ToolRisk;
}

export interface PermissionVerdict {
  decision: PermissionAction;
  rule: string | null;
  reason: string;
  source: PermissionSource;
}

const describe = (rule: PermissionRule): string => `${rule.action} ${ruleSubject(rule)}`;

/**
 * Decides every call's permission and every tool's visibility. Precedence: a matching deny rule always wins (over
 * a person's answer too); then a person's answer carried by the call; then ask rules; then allow rules and session
 * grants; then the mode's default. Shell commands in a class of `neverAutoAllowed` are allowed only by an exact
 * rule, a grant for that exact command or a person — never by a wildcard rule or a mode default.
 */
export class PermissionPolicy {
  readonly mode: PermissionMode;
  readonly rules: readonly PermissionRule[];
  readonly approveAll: boolean;
  /** Whether the configuration named the mode (a resumed session keeps its recorded mode unless one is named). */
  readonly modeGiven: boolean;

  constructor(config: PermissionsConfig = {}) {
    this.mode = config.mode ?? 'default';
    this.modeGiven = config.mode !== undefined;
    this.rules = (config.rules ?? []).map((rule) => (typeof rule === 'string' ? { source: 'rule' as const, ...parseRule(rule) } : { source: 'rule' as const, ...rule }));
    this.approveAll = config.approveAll ?? false;
  }

  /** The settings a session records at its start (`session.created.permissions`) so resume can restore them. */
  recorded(): { mode: PermissionMode; rules: Array<{ action: PermissionAction; tool: string; pattern?: string; source?: PermissionSource }> } {
    return { mode: this.mode, rules: this.rules.map((rule) => ({ action: rule.action, tool: rule.tool, ...(rule.pattern === undefined ? {} : { pattern: rule.pattern }), ...(rule.source ? { source: rule.source } : {}) })) };
  }

  /**
   * Whether the model may see (and call) this tool this round: plan mode hides tools that change things (delegation
   * stays: children inherit plan mode); a tool-wide deny rule hides the tool.
   */
  visibility(tool: PermissionTool): { visible: true } | { visible: false; reason: string; denial: 'mode' | 'tool-deny' } {
    if (this.mode === 'plan' && !tool.annotations.readOnly && tool.risk !== 'delegate') return { visible: false, reason: `plan mode shows read-only tools only`, denial: 'mode' };
    const denied = this.rules.find((rule) => rule.action === 'deny' && rule.pattern === undefined && ruleNamesTool(rule, tool.name));
    if (denied) return { visible: false, reason: `the rule "${describe(denied)}" denies it`, denial: 'tool-deny' };
    return { visible: true };
  }

  /** Decide one call. Pure: the same tool, subject, answer and grants always give the same verdict. */
  decide(request: { tool: PermissionTool; subject?: PermissionSubject; approval?: ApprovalOutcome; grants?: readonly PermissionRule[] }): PermissionVerdict {
    const { tool, subject = {}, approval } = request;
    const targets = subject.target === undefined ? [] : [subject.target];
    const everyPart = [...targets, ...(subject.parts ?? [])];
    const risky = (subject.classes ?? []).filter((shellClass) => neverAutoAllowed.has(shellClass));
    const ran = [...everyPart, ...(subject.run?.commands ?? [])];
    const deny = this.rules.find((rule) => rule.action === 'deny' && ruleMatches(rule, tool.name, ran));
    if (deny) return { decision: 'deny', rule: describe(deny), reason: `denied by the rule "${describe(deny)}"`, source: 'rule' };
    // A line that hides what it runs cannot be checked against a deny pattern: while one is in force, it is denied.
    const run = subject.run;
    const blind = run && this.rules.find((rule) => rule.action === 'deny' && rule.pattern !== undefined && ruleNamesTool(rule, tool.name) && denyCannotBeChecked(rule.pattern, run));
    if (blind) {
      const why = run.hidden ?? `it runs ${run.dynamic.join(', ')} with arguments it does not spell out`;
      return { decision: 'deny', rule: describe(blind), reason: `the rule "${describe(blind)}" cannot be checked against this command (${why}), so it is denied; spell the command out`, source: 'rule' };
    }
    if (this.mode === 'plan' && !tool.annotations.readOnly && tool.risk !== 'delegate') return { decision: 'deny', rule: 'mode:plan', reason: 'plan mode allows read-only tools only', source: 'mode' };
    if (approval) {
      if (approval.decision === 'deny') return { decision: 'deny', rule: null, reason: approval.feedback ? `the user denied it: ${approval.feedback}` : 'the user denied it', source: 'user' };
      return { decision: 'allow', rule: approval.decision === 'allow-session' ? (approval.rule ?? null) : null, reason: `the user allowed it (${approval.decision})`, source: 'user' };
    }
    // A destructive MCP tool is allowed only by a rule that names it: a glob of tool names (`mcp__fs__*`) never covers it.
    const namedOnly = tool.annotations.destructive && tool.name.startsWith('mcp__');
    const covers = (rule: PermissionRule) => ruleMatches(rule, tool.name, targets) && (risky.length === 0 || (isExactPattern(rule.pattern) && patternLiteral(rule.pattern) === subject.target)) && !(namedOnly && isToolGlob(rule.tool));
    const ask = this.rules.find((rule) => rule.action === 'ask' && ruleMatches(rule, tool.name, ran));
    if (ask) return this.answered({ decision: 'ask', rule: describe(ask), reason: `the rule "${describe(ask)}" asks`, source: 'rule' });
    const allow = this.rules.find((rule) => rule.action === 'allow' && covers(rule));
    if (allow) return { decision: 'allow', rule: describe(allow), reason: `allowed by the rule "${describe(allow)}"`, source: allow.source ?? 'rule' };
    const grant = (request.grants ?? []).find(covers);
    if (grant) return { decision: 'allow', rule: describe(grant), reason: `allowed for this session ("${ruleSubject(grant)}")`, source: 'session' };
    const parted = subject.shellParts && risky.includes('chained') ? this.partByPart(tool, subject.shellParts, request.grants ?? []) : undefined;
    if (parted && 'verdict' in parted) return parted.verdict;
    return this.answered(this.modeDefault(tool, subject, risky, parted?.blocker));
  }

  /**
   * A line of several parts (a pipeline or list) is allowed when every part is: a read-only command, or one an allow
   * rule or session grant covers as it would cover that command alone — its text (a writing redirection included)
   * matched, and a part in a class of `neverAutoAllowed` only by an exact rule — and so is every command the part
   * runs. A part whose programs rein cannot name is never allowed this way. Deny and ask rules were applied before,
   * to every part and every command the line runs.
   */
  private partByPart(tool: PermissionTool, parts: readonly ShellPart[], grants: readonly PermissionRule[]): { verdict: PermissionVerdict } | { blocker: string } {
    const namedOnly = tool.annotations.destructive && tool.name.startsWith('mcp__');
    const allows = [...this.rules.filter((rule) => rule.action === 'allow').map((rule) => ({ rule, source: rule.source ?? ('rule' as const) })), ...grants.map((rule) => ({ rule, source: 'session' as const }))];
    const used: Array<{ rule: PermissionRule; source: PermissionSource }> = [];
    /** Undefined when `text` with `classes` is allowed; else why not. */
    const judge = (text: string, classes: readonly ShellClass[]): string | undefined => {
      if (classes.length > 0 && classes.every((shellClass) => shellClass === 'read-only')) return undefined;
      const risky = classes.filter((shellClass) => neverAutoAllowed.has(shellClass));
      const found = allows.find(({ rule }) => ruleMatches(rule, tool.name, [text]) && (risky.length === 0 || (isExactPattern(rule.pattern) && patternLiteral(rule.pattern) === text)) && !(namedOnly && isToolGlob(rule.tool)));
      if (found) {
        if (!used.includes(found)) used.push(found);
        return undefined;
      }
      return risky.length > 0 ? `is ${risky.join(', ')}: never allowed automatically` : 'is not read-only and no rule allows it';
    };
    for (const part of parts) {
      if (part.unknown) return { blocker: `its part "${part.text}" runs a program rein cannot name: never allowed automatically` };
      const whole = judge(part.text, part.classes);
      if (whole) return { blocker: `its part "${part.text}" ${whole}` };
      for (const ran of part.runs) {
        const inner = judge(ran.command, ran.classes);
        if (inner) return { blocker: `its part "${part.text}" runs "${ran.command}", which ${inner}` };
      }
    }
    if (used.length === 0) return { verdict: { decision: 'allow', rule: `mode:${this.mode}`, reason: 'every part of the line is a read-only command', source: 'mode' } };
    const rule = used.map(({ rule: each }) => describe(each)).join(' + ');
    return { verdict: { decision: 'allow', rule, reason: `every part of the line is read-only or allowed (${rule})`, source: used[0]!.source } };
  }

  private modeDefault(tool: PermissionTool, subject: PermissionSubject, risky: readonly ShellClass[], blocker?: string): PermissionVerdict {
    const rule = `mode:${this.mode}`;
    if (blocker !== undefined) return { decision: 'ask', rule, reason: `the command is ${risky.join(', ')}; ${blocker}`, source: 'mode' };
    if (risky.length > 0) return { decision: 'ask', rule, reason: `the command is ${risky.join(', ')}: never allowed automatically`, source: 'mode' };
    if (tool.annotations.readOnly) return { decision: 'allow', rule, reason: 'read-only tool', source: 'mode' };
    if (tool.name.startsWith('mcp__')) return { decision: 'ask', rule, reason: tool.annotations.destructive ? 'the MCP server marks this tool destructive (or does not say it is not)' : 'MCP tools that are not read-only need approval', source: 'mode' };
    if (tool.risk === 'delegate') return { decision: 'allow', rule, reason: 'children run within this agent\'s rights; each of their calls is decided on its own', source: 'mode' };
    if (tool.risk === 'execute' && subject.classes?.includes('read-only')) return { decision: 'allow', rule, reason: 'read-only command', source: 'mode' };
    if (tool.risk === 'write' && this.mode === 'accept-edits') return { decision: 'allow', rule, reason: 'accept-edits mode allows workspace edits', source: 'mode' };
    if (tool.risk === 'write') return { decision: 'ask', rule, reason: 'edits need approval in default mode', source: 'mode' };
    if (tool.risk === 'execute') return { decision: 'ask', rule, reason: 'commands that are not read-only need approval', source: 'mode' };
    return { decision: 'ask', rule, reason: `${tool.risk} tools need approval`, source: 'mode' };
  }

  private answered(verdict: PermissionVerdict): PermissionVerdict {
    if (verdict.decision !== 'ask' || !this.approveAll) return verdict;
    return { decision: 'allow', rule: '--yes', reason: `answered in advance (${verdict.reason})`, source: 'pre-approved' };
  }
}

const modeRank: Record<PermissionMode, number> = { plan: 0, default: 1, 'accept-edits': 2 };

/**
 * The policy a resumed session runs under: the one it recorded at its start, with what the resume's configuration
 * adds. Every recorded rule holds (a deny rule cannot be lifted by resuming, `--yes` included); the resume's rules
 * are added; the recorded mode holds unless the resume names one. `changes` says, in words, what differs from the
 * recorded settings (a wider mode first), for the CLI to print.
 */
export const restoredPolicy = (recorded: ReturnType<PermissionPolicy['recorded']> | undefined, current: PermissionPolicy): { policy: PermissionPolicy; changes: string[] } => {
  if (!recorded) return { policy: current, changes: [] };
  const key = (rule: Pick<PermissionRule, 'action' | 'tool' | 'pattern'>) => `${rule.action} ${ruleSubject(rule)}`;
  const known = new Set(recorded.rules.map(key));
  const added = current.rules.filter((rule) => !known.has(key(rule)));
  const mode = current.modeGiven ? current.mode : recorded.mode;
  const changes: string[] = [];
  if (mode !== recorded.mode) changes.push(`mode ${recorded.mode} → ${mode}${modeRank[mode] > modeRank[recorded.mode] ? ' (wider than the session started with)' : ''}`);
  for (const rule of added) changes.push(`adds ${key(rule)}`);
  const policy = new PermissionPolicy({ mode, rules: [...recorded.rules.map((rule) => ({ source: 'rule' as const, ...rule })), ...added], approveAll: current.approveAll });
  return { policy, changes };
};

/**
 * The rule an approval suggests for `allow for session` (and the CLI prints for `--approve`): the exact command for a
 * shell call and the exact path for an MCP call that names one — `*`, `?` and escaping backslashes escaped, so the
 * rule matches that target and no other — the tool for anything else.
 */
export const suggestRule = (tool: PermissionTool, subject: PermissionSubject = {}): string =>
  (tool.risk === 'execute' || tool.name.startsWith('mcp__')) && subject.target !== undefined ? ruleSubject({ tool: tool.name, pattern: literalPattern(subject.target) }) : tool.name;
