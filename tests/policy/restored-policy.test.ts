import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PermissionPolicy, restoredPolicy } from '../../src/policy/permission-policy.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { commandsRun } from '../../src/policy/shell-commands.js';
import { propertyRuns } from '../support/temp-dir.js';

const bash = { name: 'bash', annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true, requiresConfirmation: true }, risk: 'execute' as const };
const write = { name: 'write', annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false, requiresConfirmation: true }, risk: 'write' as const };
const where = { workspace: '/w', cwd: '/w' };
const subject = (command: string) => {
  const classified = classifyShellCommand(command, where);
  return { target: command, parts: classified.parts, classes: classified.classes, run: commandsRun(command) };
};

describe('a resumed session runs under the permissions it recorded (D21)', () => {
  const rule = fc.constantFrom('deny bash:rm *', 'deny bash:git push*', 'deny write', 'ask bash:npm *', 'allow write:src/*', 'allow bash:ls');
  const mode = fc.constantFrom('default' as const, 'plan' as const, 'accept-edits' as const);

  it('whatever the resume configures, every recorded deny still denies, --yes included; the mode holds unless named', () => {
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 4 }), mode, fc.array(rule, { maxLength: 3 }), fc.option(mode, { nil: undefined }), (recordedRules, recordedMode, resumeRules, resumeMode) => {
        const recorded = new PermissionPolicy({ mode: recordedMode, rules: recordedRules }).recorded();
        const { policy, changes } = restoredPolicy(recorded, new PermissionPolicy({ rules: resumeRules, approveAll: true, ...(resumeMode ? { mode: resumeMode } : {}) }));
        expect(policy.mode).toBe(resumeMode ?? recordedMode);
        if ((resumeMode ?? recordedMode) !== recordedMode) expect(changes[0]).toMatch(/^mode /);
        if (recordedRules.includes('deny bash:rm *')) expect(policy.decide({ tool: bash, subject: subject('rm keep.txt') }).decision).toBe('deny');
        if (recordedRules.includes('deny bash:git push*')) expect(policy.decide({ tool: bash, subject: subject('env git push') }).decision).toBe('deny');
        if (recordedRules.includes('deny write')) expect(policy.decide({ tool: write, subject: { target: 'a.txt' } }).decision).toBe('deny');
        if (recordedMode === 'plan' && resumeMode === undefined) expect(policy.decide({ tool: write, subject: { target: 'a.txt' } }).decision).toBe('deny');
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('the same flags on resume change nothing: same rules, same mode, no changes to report', () => {
    const recorded = new PermissionPolicy({ mode: 'plan', rules: ['deny bash:rm *', 'allow write'] });
    const { policy, changes } = restoredPolicy(recorded.recorded(), new PermissionPolicy({ mode: 'plan', rules: ['deny bash:rm *', 'allow write'] }));
    expect(changes).toEqual([]);
    expect(policy.recorded()).toEqual(recorded.recorded());
  });
});
