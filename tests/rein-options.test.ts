import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../stores/index.js';
import { createRein } from '../src/rein.js';
import { createScriptedProvider, parseScript } from '../src/providers/scripted-provider.js';
import { makeTempDir } from './support/temp-dir.js';

describe('createRein refuses options it cannot apply (trial 5 E28)', () => {
  it('a rule with no or a misspelt action, an unknown tool name, a bad mode, NaN or negative budgets, a missing provider: USAGE naming the field', async () => {
    const workspace = await makeTempDir('rein-options-');
    try {
      const base = { store: createMemoryEventStore(), workspace: workspace.path, provider: createScriptedProvider(parseScript({ turns: [{ text: 'Done.' }] })) };
      const refused = async (extra: Record<string, unknown>, field: string) => {
        await expect(createRein({ ...base, ...extra } as never)).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining(field) });
      };
      await refused({ permissions: { rules: [{ tool: 'bash', pattern: 'rm *', effect: 'deny' }] } }, 'permissions.rules[0]');
      await refused({ permissions: { rules: [{ action: 'DENY', tool: 'bash', pattern: 'rm *' }] } }, 'permissions.rules[0]');
      await refused({ permissions: { rules: ['deny Bash:rm *'] } }, 'there is no tool "Bash"');
      await refused({ permissions: { mode: 'yolo' } }, 'permissions.mode');
      await refused({ budgets: { maxTurns: -1 } }, 'budgets.maxTurns');
      await refused({ budgets: { maxTokens: Number.NaN } }, 'budgets.maxTokens');
      await refused({ retry: { maxAttempts: 0 } }, 'retry.maxAttempts');
      await refused({ snapshotEvery: -5 }, 'snapshotEvery');
      await refused({ provider: undefined }, 'provider');
      // What is well-formed still works: rules for plugin and MCP tools (known later), globs, a zero budget.
      const rein = await createRein({ ...base, permissions: { rules: ['deny bash:rm *', { action: 'deny', tool: 'mcp__fs__*' }, 'allow myplugin__ping'] }, budgets: { maxToolCalls: 0 } });
      await rein.close();
    } finally {
      await workspace.remove();
    }
  });
});
