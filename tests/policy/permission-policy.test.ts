import { describe, expect, it } from 'vitest';
import { PermissionPolicy, suggestRule } from '../../src/policy/permission-policy.js';
import { parseRule } from '../../src/policy/permission-rules.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { bashTool } from '../../src/tools/bash.tool.js';
import { readTool } from '../../src/tools/read.tool.js';
import { writeTool } from '../../src/tools/write.tool.js';

const shell = (command: string) => {
  const { classes, parts } = classifyShellCommand(command, { workspace: '/w', cwd: '/w' });
  return { target: command, parts, classes };
};
const bash = (policy: PermissionPolicy, command: string, grants = [] as ReturnType<typeof parseRule>[]) => policy.decide({ tool: bashTool, subject: shell(command), grants });

describe('permission policy', () => {
  it('default mode: read-only tools and read-only commands run, edits and other commands ask', () => {
    const policy = new PermissionPolicy();
    expect(policy.decide({ tool: readTool, subject: { target: 'a.txt' } })).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(policy.decide({ tool: writeTool, subject: { target: 'a.txt' } })).toMatchObject({ decision: 'ask', source: 'mode' });
    expect(bash(policy, 'git status')).toMatchObject({ decision: 'allow', reason: 'read-only command' });
    expect(bash(policy, 'npm test')).toMatchObject({ decision: 'ask' });
  });

  it('accept-edits allows workspace edits but not commands', () => {
    const policy = new PermissionPolicy({ mode: 'accept-edits' });
    expect(policy.decide({ tool: writeTool, subject: { target: 'a.txt' } })).toMatchObject({ decision: 'allow', rule: 'mode:accept-edits' });
    expect(bash(policy, 'npm test').decision).toBe('ask');
  });

  it('plan mode shows read-only tools only and denies anything else', () => {
    const policy = new PermissionPolicy({ mode: 'plan' });
    expect(policy.visibility(readTool)).toEqual({ visible: true });
    expect(policy.visibility(writeTool).visible).toBe(false);
    expect(policy.visibility(bashTool).visible).toBe(false);
    expect(policy.decide({ tool: writeTool, subject: { target: 'a.txt' }, approval: { approvalId: 'x', decision: 'allow-once' } }).decision).toBe('deny');
  });

  it('deny wins over allow rules, session grants, answers given in advance and a person’s allow', () => {
    const policy = new PermissionPolicy({ rules: ['allow bash:npm *', 'deny bash:npm publish*'], approveAll: true });
    expect(bash(policy, 'npm run lint').decision).toBe('allow');
    expect(bash(policy, 'npm publish')).toMatchObject({ decision: 'deny', source: 'rule', rule: 'deny bash:npm publish*' });
    expect(bash(policy, 'npm publish', [parseRule('bash:npm publish', 'allow')]).decision).toBe('deny');
    expect(policy.decide({ tool: bashTool, subject: shell('npm publish'), approval: { approvalId: 'x', decision: 'allow-once' } }).decision).toBe('deny');
  });

  it('a deny rule matches any part of a compound command', () => {
    const policy = new PermissionPolicy({ rules: ['deny bash:git reset*'] });
    expect(bash(policy, 'ls && git reset --hard').decision).toBe('deny');
  });

  it('never allows risky classes by a wildcard rule or a mode default, only by an exact rule, a person or --yes', () => {
    const broad = new PermissionPolicy({ rules: ['allow bash', 'allow bash:*'] });
    for (const command of ['rm -rf build', 'curl example.com', 'npm install x', 'ls && ls', 'echo $(id)', 'cat /etc/hosts', 'sudo ls']) {
      expect(bash(broad, command).decision).toBe('ask');
    }
    expect(bash(new PermissionPolicy({ rules: ['allow bash:rm -rf build'] }), 'rm -rf build').decision).toBe('allow');
    expect(bash(new PermissionPolicy({ approveAll: true }), 'rm -rf build')).toMatchObject({ decision: 'allow', source: 'pre-approved' });
    expect(bash(broad, 'rm -rf build', [parseRule('bash:rm -rf build', 'allow')])).toMatchObject({ decision: 'allow', source: 'session' });
  });

  it('ask rules beat allow rules', () => {
    expect(bash(new PermissionPolicy({ rules: ['allow bash', 'ask bash:git push*'] }), 'git status').decision).toBe('allow');
    expect(new PermissionPolicy({ rules: ['allow *', 'ask write:secrets/*'] }).decide({ tool: writeTool, subject: { target: 'secrets/key' } }).decision).toBe('ask');
  });

  it('a tool-wide deny hides the tool', () => {
    expect(new PermissionPolicy({ rules: ['deny bash'] }).visibility(bashTool)).toMatchObject({ visible: false });
    expect(new PermissionPolicy({ rules: ['deny bash:rm *'] }).visibility(bashTool)).toEqual({ visible: true });
  });

  it('suggests the exact command for shell calls and the tool for the rest', () => {
    expect(suggestRule(bashTool, shell('npm test'))).toBe('bash:npm test');
    expect(suggestRule(writeTool, { target: 'a.txt' })).toBe('write');
  });

  it('rejects malformed rules with a usage error', () => {
    expect(() => parseRule('bash')).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => parseRule('allow bad tool!')).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => parseRule('allow bash:')).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(parseRule('deny bash:git push*')).toEqual({ action: 'deny', tool: 'bash', pattern: 'git push*' });
  });
});
