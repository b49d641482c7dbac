import type { Command } from 'commander';
import { ReinError } from '../../host/host-errors.js';
import { contextAtTurn } from '../../session/context-at-turn.js';
import { readSession } from '../../session/session-records.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import { ToolRegistry } from '../../tools/tool-registry.js';
import { openStore, printJson, workspaceOf, type CommonOptions } from '../cli-context.js';
import { renderContext } from '../context-display.js';
import { addCommonOptions } from './run.command.js';

interface ContextOptions extends CommonOptions {
  turn?: string;
  actor?: string;
  attempt?: string;
}

const positive = (flag: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new ReinError('USAGE', `${flag} must be a positive integer, got ${JSON.stringify(value)}`);
  return parsed;
};

/** `rein context <id> [--turn N]`: exactly what the model saw at a turn, and the decision ledger behind it (read-only). */
export const registerContext = (program: Command): void => {
  const command = program
    .command('context')
    .description('show exactly what the model saw at a turn and why (read-only)')
    .argument('<id>', 'session id')
    .option('--turn <n>', 'the model turn (default: the last)')
    .option('--actor <path>', 'the actor (default: root)')
    .option('--attempt <n>', 'the attempt within the turn (default: the last)');
  addCommonOptions(command).action(async (id: string, options: ContextOptions) => {
    const turn = positive('--turn', options.turn);
    const attempt = positive('--attempt', options.attempt);
    const store = await openStore(options, await workspaceOf(options), 'read-only');
    try {
      const records = await readSession(store, id);
      const shown = await contextAtTurn(store, records, { registry: new ToolRegistry(builtinTools()), ...(turn ? { turn } : {}), ...(attempt ? { attempt } : {}), ...(options.actor ? { actor: options.actor } : {}) });
      if (options.json) printJson(shown);
      else process.stdout.write(renderContext(shown));
    } finally {
      await store.close();
    }
  });
};
