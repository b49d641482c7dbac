/**
 * A scripted tree for cost-budget tests: a root that delegates one explorer, every model call recorded at 10,000 input
 * tokens, so at `scriptPrices` ($100 per million for the model `script`) each call costs $1.00 — four calls, $4.00.
 */
const usage = { inputTokens: 10_000, outputTokens: 0 };

export const costScript = {
  turns: [
    { text: 'd', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'e1', role: 'explorer', objective: 'look' }] } }], usage },
    { text: 'Done.', usage },
  ],
  agents: {
    explorer: {
      turns: [
        { text: 'r', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }], usage },
        { text: 's', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'read it', findings: [] } }], usage },
      ],
    },
  },
};

/** The `prices` of a rein.config.json that price the scripted provider's model at $100 per million tokens. */
export const scriptPrices = { script: { input: 100, output: 100 } };
