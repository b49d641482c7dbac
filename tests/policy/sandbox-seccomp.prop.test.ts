import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refusedSyscalls, seccompAbis, seccompInstructions, seccompProgram, type BpfInstruction } from '../../src/policy/sandbox-seccomp.js';
import { propertyRuns } from '../support/temp-dir.js';

const allow = 0x7fff0000;
const eperm = 0x00050001;

/** The kernel's reading of a classic BPF seccomp program, for the instructions the filter uses. */
const evaluate = (program: readonly BpfInstruction[], data: { nr: number; arch: number }): number => {
  let accumulator = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc]!;
    if (code === 0x20) accumulator = k === 0 ? data.nr >>> 0 : k === 4 ? data.arch >>> 0 : Number.NaN;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected opcode ${code}`);
    if (pc + 1 > program.length) throw new Error('jumped past the end');
  }
  throw new Error('fell off the end');
};

describe('the seccomp filter', () => {
  for (const [arch, abis] of Object.entries(seccompAbis)) {
    const program = seccompInstructions(arch)!;
    it(`${arch}: refuses every listed call with EPERM on each ABI it knows, and allows every other number`, () => {
      for (const abi of abis) {
        const refused = new Set(refusedSyscalls.flatMap((name) => (abi.table[name] === undefined ? [] : [abi.table[name]!])));
        for (const number of refused) expect(evaluate(program, { nr: number, arch: abi.audit }), `${arch} ${number}`).toBe(eperm);
        fc.assert(
          fc.property(fc.integer({ min: 0, max: 0xffffffff }), (nr) => {
            const expected = refused.has(nr) || (abi.x32Base !== undefined && nr >= abi.x32Base) ? eperm : allow;
            expect(evaluate(program, { nr, arch: abi.audit })).toBe(expected);
          }),
          { numRuns: propertyRuns(500) },
        );
      }
    });
    it(`${arch}: refuses everything on an ABI it does not know`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 0xffffffff }).filter((audit) => !abis.some((abi) => abi.audit === audit)), fc.integer({ min: 0, max: 1000 }), (audit, nr) => {
          expect(evaluate(program, { nr, arch: audit })).toBe(eperm);
        }),
        { numRuns: propertyRuns(200) },
      );
    });
  }

  it('is the bytes of struct sock_filter, and nothing for an architecture without a table', () => {
    const bytes = seccompProgram('x64')!;
    const instructions = seccompInstructions('x64')!;
    expect(bytes.length).toBe(instructions.length * 8);
    expect([bytes.readUInt16LE(0), bytes.readUInt8(2), bytes.readUInt8(3), bytes.readUInt32LE(4)]).toEqual([instructions[0]!.code, instructions[0]!.jt, instructions[0]!.jf, instructions[0]!.k]);
    expect(seccompProgram('s390x')).toBeNull();
  });
});
