import * as z from 'zod';
import { defineTool, readOnlyAnnotations, toolFailure } from '../tools/tool.js';
import { toolSearchName } from './visible-set.js';
import { lazySchema } from '../../models/lazy-schema.js';

const ToolSearchArguments = lazySchema(() => z
  .object({
    query: z.string().min(1).max(500).describe('What you need, in words: "github pull request checks", "send a slack message", "database schema"'),
    limit: z.number().int().min(1).max(20).optional().describe('How many matches to return (default 5)'),
  })
  .strict());
type ToolSearchArguments = z.infer<typeof ToolSearchArguments>;

/**
 * `tool_search`: ranks the tools (and skills) the agent could use but may not see this round — the session has more
 * than fit in one round's tool list — by how well their names and descriptions match a query (BM25), with the terms
 * that matched. A deferred tool it finds joins the agent's visible set from the next round (`tool.settled.value.hits`
 * is what the visible set reads); a match never grants permission.
 */
export const toolSearchTool = defineTool<ToolSearchArguments>({
  name: toolSearchName,
  description:
    'Find tools that are available but not in your current tool list (this session has more tools than fit in one turn), and skills you can load. Give a short description of what you need. Tools you find become callable from your next turn; finding one does not grant permission to use it.',
  parameters: ToolSearchArguments,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'none',
  resumePolicy: 'rerun-after-check',
  async execute(args, context) {
    if (!context.capabilities) return toolFailure('NotFound', 'tool search is not available in this session', 'capabilities_unavailable');
    const { matches, deferred } = context.capabilities.search(args.query, args.limit ?? 5);
    const hits = matches.filter((match) => match.kind === 'tool' && !match.visible).map((match) => match.name);
    const note =
      matches.length === 0
        ? `Nothing matched "${args.query}". ${deferred} tool(s) are deferred; try other words.`
        : hits.length > 0
          ? `${hits.join(', ')} will be in your tool list from your next turn. Load a skill with the skill tool. A match is not a permission: calls are still checked.`
          : 'Every tool that matched is in your tool list already.';
    const output = JSON.stringify({ query: args.query, matches, note }, null, 1);
    return { ok: true, output, value: { hits } };
  },
});
