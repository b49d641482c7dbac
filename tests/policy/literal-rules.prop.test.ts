import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PermissionPolicy, suggestRule, type PermissionTool } from '../../src/policy/permission-policy.js';
import { isExactPattern, literalPattern, parseRule, patternLiteral, patternMatches } from '../../src/policy/permission-rules.js';
import { shellWord } from '../../src/util/shell-word.js';

const bash: PermissionTool = { name: 'bash', annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true, requiresConfirmation: false }, risk: 'execute' };

// Commands as a model writes them, weighted towards the characters patterns and shells treat specially.
const special = fc.constantFrom('*', '?', '\\', '[', ']', '{', '}', ' ', "'", '"', '$', '`', '\n', '\t', '\u001b', '\u202e', ':', '!', ';', '&');
const unit = fc.oneof(special, fc.constantFrom('a', 'b', 'r', 'm', '-', 'f', '.', '/', '1'), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' }));
const command = fc.string({ unit, minLength: 1, maxLength: 24 }).map((text) => text.trim()).filter((text) => text.length > 0);

/** The rule the CLI prints for an approval of `target`, read back as `--approve` reads it. */
const printed = (target: string) => parseRule(suggestRule(bash, { target }), 'allow');

describe('the rule printed for a command answers that command and no other (trial 5 E30)', () => {
  it('for any command, the printed rule is exact, matches it and nothing that differs', () => {
    fc.assert(
      fc.property(command, command, (target, other) => {
        const rule = printed(target);
        expect(rule.tool).toBe('bash');
        expect(isExactPattern(rule.pattern)).toBe(true);
        expect(patternLiteral(rule.pattern!)).toBe(target);
        expect(patternMatches(rule.pattern!, target)).toBe(true);
        if (other !== target) expect(patternMatches(rule.pattern!, other)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('the printed rule allows a command never allowed automatically (delete, chained) — and only that command', () => {
    fc.assert(
      fc.property(command, command, (target, other) => {
        const policy = new PermissionPolicy({ rules: [{ ...printed(target) }] });
        const decide = (subjectTarget: string) => policy.decide({ tool: bash, subject: { target: subjectTarget, parts: [subjectTarget], classes: ['delete', 'chained'] } }).decision;
        expect(decide(target)).toBe('allow');
        if (other !== target) expect(decide(other)).toBe('ask');
      }),
      { numRuns: 500 },
    );
  });

  it('escapes undo exactly: literalPattern and patternLiteral are inverse, and unescaped wildcards still match', () => {
    fc.assert(
      fc.property(fc.string({ unit }), (text) => {
        expect(patternLiteral(literalPattern(text))).toBe(text);
      }),
    );
    expect(patternMatches('rm -f \\*', 'rm -f *')).toBe(true);
    expect(patternMatches('rm -f \\*', 'rm -f a')).toBe(false);
    expect(patternMatches('rm -f ?', 'rm -f a')).toBe(true);
    expect(patternMatches('cat h\\?.txt', 'cat hx.txt')).toBe(false);
    expect(patternMatches('find . -name \\\\\\*.ts', 'find . -name \\*.ts')).toBe(true);
    expect(patternMatches('echo a\\b', 'echo a\\b')).toBe(true);
    expect(isExactPattern('rm -f \\*')).toBe(true);
    expect(isExactPattern('rm -f \\\\*')).toBe(false);
  });

  it('the printed word is read back by a real shell as the same text', () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 24 }).filter((text) => !text.includes('\u0000')), (text) => {
        const read = execFileSync('bash', ['-c', `printf '%s' ${shellWord(text)}`], { encoding: 'utf8' });
        expect(read).toBe(text);
        expect(shellWord(text)).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
      }),
      { numRuns: 60 },
    );
  });
});
