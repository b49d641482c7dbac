import type { Command } from 'commander';
import { graphableNames } from './graph.flags.js';

/** `rein graph <machine>`: a statechart's state graph as JSON, or Mermaid with `--format mermaid`. */
export const registerGraph = (program: Command): void => {
  program
    .command('graph')
    .description(`print a machine's state graph (${graphableNames.join(', ')}) as JSON or Mermaid`)
    .argument('<machine>', 'which machine')
    .option('--format <format>', 'json (the default) or mermaid')
    .option('--json', 'the same as --format json')
    .action(async (name: string, options: { format?: string; json?: boolean }) => (await import('./graph.action.js')).graphCommand(name, options));
};
