import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReinError } from '../../src/host/host-errors.js';
import { wholeNumberFlag } from '../../src/cli/whole-number-flag.js';
import { runInProcess } from '../support/cli-in-process.js';

/** Trial 7 G10: `rein fork --at 1e1` forked at seq 10 and `--at 0x10` at 16. */
describe('whole-number flags', () => {
  const read = (value: string) => wholeNumberFlag(value, { min: 0, message: '--at must be an integer seq' });

  it('take decimal digits only, and give back exactly that number', () => {
    fc.assert(
      fc.property(fc.nat(), (value) => {
        expect(read(String(value))).toBe(value);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        if (/^\d+$/.test(text) && Number.isSafeInteger(Number(text))) return;
        expect(() => read(text)).toThrow(ReinError);
      }),
    );
    for (const text of ['1e1', '0x10', '0b1', ' 7', '7 ', '+3', '-1', '1.0', '', 'Infinity', '9007199254740993']) expect(() => read(text), text).toThrow(`--at must be an integer seq, got ${JSON.stringify(text)}`);
  });

  it('rein fork --at 1e1 is a usage error, not a fork at seq 10', async () => {
    const fork = await runInProcess(['fork', 's-none', '--at', '1e1'], { cwd: process.cwd() });
    expect(fork.code).toBe(2);
    expect(fork.stderr).toContain('USAGE: --at must be an integer seq, got "1e1"');
    const turns = await runInProcess(['run', 'x', '--max-turns', '0x10'], { cwd: process.cwd() });
    expect(turns.stderr).toContain('--max-turns must be a positive integer, got "0x10"');
  });
});
