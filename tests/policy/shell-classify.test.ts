import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyShellCommand, neverAutoAllowed } from '../../src/policy/shell-classify.js';
import { propertyRuns } from '../support/temp-dir.js';

const where = { workspace: '/work/project', cwd: '/work/project' };
const classes = (command: string) => classifyShellCommand(command, where).classes;

describe('shell classification', () => {
  it.each([
    ['git status', ['read-only']],
    ['ls -la src', ['read-only']],
    ['grep -rn sum src', ['read-only']],
    ['cat package.json', ['read-only']],
    ['npm test', []],
    ['rm -rf node_modules', ['delete']],
    ['git clean -fdx', ['delete']],
    ['git reset --hard HEAD~1', ['delete']],
    ['find . -name "*.tmp" -delete', ['delete']],
    ['curl https://example.com', ['network']],
    ['git push origin main', ['network']],
    ['npm publish', ['network']],
    ['npm install left-pad', ['install']],
    ['pip install requests', ['install']],
    ['npx create-thing', ['install']],
    ['sudo ls', ['privileged', 'read-only'].filter((value) => value !== 'read-only')],
    ['cat /etc/passwd', ['outside-workspace']],
    ['ls ../other', ['outside-workspace']],
    ['cd / && ls', ['chained', 'outside-workspace', 'read-only']],
    ['ls ~/.ssh', ['outside-workspace']],
    ['rg deprecated src > report.txt', ['write']],
    ['echo hi > /dev/null', ['read-only']],
    ['ls && git reset --hard', ['chained', 'delete']],
    ['cat package.json | sh', ['chained']],
    ['rg foo src --files-with-matches | xargs rm', ['chained', 'delete']],
    ['echo $(rm -rf /)', ['unparseable']],
    ['echo `whoami`', ['unparseable']],
    ['echo "unterminated', ['unparseable']],
    ['bash -c "rm -rf /"', ['unparseable']],
    ['eval "$CMD"', ['unparseable']],
    ['(cd src; ls)', ['unparseable']],
    ['cat <<EOF\nhi\nEOF', ['unparseable']],
  ])('%s → %j', (command, expected) => {
    expect(classes(command)).toEqual([...expected].sort());
  });

  it('keeps read-only only when every part is read-only', () => {
    expect(classes('git log | head -5')).toEqual(['chained', 'read-only']);
    expect(classes('ls; touch x')).toEqual(['chained', 'write']);
  });

  it('never crashes on arbitrary lines, and unparseable stands alone', () => {
    const words = fc.constantFrom('ls', 'rm', 'curl', 'npm', 'install', 'git', 'push', '-rf', '/', '..', '~', '&&', '|', ';', '>', '$(', '`', '"', "'", '\\', '(', ')', 'x', 'src', '2>&1', '#', '\n');
    fc.assert(
      fc.property(fc.array(words, { maxLength: 12 }), (parts) => {
        const result = classifyShellCommand(parts.join(' '), where);
        if (result.classes.includes('unparseable')) expect(result.classes).toEqual(['unparseable']);
        expect(result.parts.length).toBeGreaterThan(0);
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('judges a compound line by its riskiest part, whatever comes first', () => {
    const safe = fc.array(fc.constantFrom('ls', 'cat', 'git', 'status', 'src', '-la', 'x'), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(safe, fc.constantFrom('&&', '||', ';', '|'), (first, operator) => {
        const result = classes(`${first.join(' ')} ${operator} rm -rf build`);
        expect(result).toContain('chained');
        expect(result).toContain('delete');
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('lists the classes that are never allowed automatically', () => {
    expect([...neverAutoAllowed].sort()).toEqual(['chained', 'delete', 'install', 'network', 'outside-workspace', 'privileged', 'protected-path', 'unparseable']);
  });
});
