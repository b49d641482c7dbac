import { contextAtTurn } from '../../session/context-at-turn.js';
import { readSession } from '../../session/session-records.js';
import { builtinTools } from '../../tools/builtin-tools.js';
import { ToolRegistry } from '../../tools/tool-registry.js';
import { openStore, printJson, workspaceOf } from '../cli-context.js';
import { printText } from '../print-text.js';
import { positiveFlag as positive } from '../whole-number-flag.js';
import { renderContext } from '../context-display.js';
import type { ContextOptions } from './context.flags.js';

/** The body of `rein context` (see `registerContext`). */
export const contextCommand = async (id: string, options: ContextOptions): Promise<void> => {
  const turn = positive('--turn', options.turn);
  const attempt = positive('--attempt', options.attempt);
  const store = await openStore(options, await workspaceOf(options), 'read-only');
  try {
    const records = await readSession(store, id);
    const shown = await contextAtTurn(store, records, { registry: new ToolRegistry(builtinTools()), ...(turn ? { turn } : {}), ...(attempt ? { attempt } : {}), ...(options.actor ? { actor: options.actor } : {}) });
    if (options.json) printJson(shown);
    else printText(renderContext(shown));
  } finally {
    await store.close();
  }
};
