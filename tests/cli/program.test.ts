import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, commandRegistrars } from '../../src/cli/program.js';

const namesOf = (program: Command): string[] => program.commands.map((command) => command.name()).sort();

describe('the rein command line, built per invocation', () => {
  it('each registrar declares exactly the commands its entry names, and together they are the whole CLI', () => {
    for (const entry of commandRegistrars) {
      const program = new Command();
      entry.register(program, () => {});
      expect(namesOf(program)).toEqual([...entry.names].sort());
    }
    expect(namesOf(buildProgram(() => {}))).toEqual(commandRegistrars.flatMap((entry) => entry.names).sort());
  });

  it('a known command builds only its own registrar; no command, help or an unknown one builds every command', () => {
    expect(namesOf(buildProgram(() => {}, ['node', 'rein', 'show', 's-1']))).toEqual(['fork', 'replay', 'sessions', 'show']);
    expect(namesOf(buildProgram(() => {}, ['node', 'rein', 'graph', 'session']))).toEqual(['graph']);
    const all = namesOf(buildProgram(() => {}));
    for (const argv of [['node', 'rein'], ['node', 'rein', '--help'], ['node', 'rein', 'help', 'show'], ['node', 'rein', 'sesions']]) {
      expect(namesOf(buildProgram(() => {}, argv))).toEqual(all);
    }
  });
});
