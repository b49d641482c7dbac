import type { McpToolInfo, McpToolProblem } from '../../models/mcp.records.js';
import { descriptorOf } from '../capabilities/catalog.js';
import { defineTool, type AnyToolDefinition, type ToolAnnotations } from '../tools/tool.js';
import { mcpToolName, vendorToolName } from './mcp-names.js';
import { failureOfError, mapCallResult, type McpCallResult } from './mcp-result.js';
import { mcpParameters } from './mcp-schema.js';

/** A tool as a server lists it (`tools/list`). */
export interface McpListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
}

/** What an MCP tool needs from its server's connection to run. */
export interface McpCaller {
  server: string;
  /** Call `tool` (the server's own name); rejects with the SDK's errors (mapped to failures by the tool). */
  call(tool: string, args: Record<string, unknown>, options: { signal: AbortSignal; onProgress(message: string): void }): Promise<McpCallResult>;
}

/** Longest description rein passes on (a server's description is the model's only guide, but not unbounded). */
export const maxToolDescription = 4_000;

/**
 * MCP annotations as rein's: `readOnlyHint` → read-only; otherwise destructive unless `destructiveHint: false` and
 * open-world unless `openWorldHint: false` (the protocol's defaults); a destructive tool requires confirmation.
 */
export const annotationsOf = (hints: McpListedTool['annotations'] = {}): ToolAnnotations => {
  const readOnly = hints.readOnlyHint === true;
  const destructive = !readOnly && hints.destructiveHint !== false;
  return { readOnly, destructive, idempotent: hints.idempotentHint === true, openWorld: hints.openWorldHint !== false, requiresConfirmation: destructive };
};

/**
 * Map one listed tool to a rein tool: named `mcp__<server>__<tool>`, its JSON Schema advertised as is and validated
 * by the SDK's ajv engine in the pipeline's schema stage, its annotations mapped to risk (read-only tools run and
 * rerun freely; others ask, and an in-doubt call of one waits for confirmation on resume). The call runs only in
 * the execute stage; its result and errors map to observations and failure classes. A tool rein cannot use (a
 * schema that does not compile, a name clash) comes back as a problem.
 */
export const mcpToolOf = (listed: McpListedTool, caller: McpCaller): { ok: true; definition: AnyToolDefinition; info: McpToolInfo } | { ok: false; problem: McpToolProblem } => {
  const name = mcpToolName(caller.server, listed.name);
  if (!vendorToolName.test(name)) return { ok: false, problem: { tool: listed.name, reason: `cannot map the name to ${vendorToolName}` } };
  const schema = listed.inputSchema ?? { type: 'object' };
  let parameters;
  try {
    parameters = mcpParameters(schema);
  } catch (error) {
    return { ok: false, problem: { tool: listed.name, reason: `rein cannot use its input schema: ${(error as Error).message}` } };
  }
  const annotations = annotationsOf(listed.annotations);
  const described = listed.description ?? listed.title ?? listed.annotations?.title ?? `${listed.name} (from the MCP server ${caller.server})`;
  const description = described.length > maxToolDescription ? `${described.slice(0, maxToolDescription - 1)}…` : described;
  const definition = defineTool<Record<string, unknown>, undefined>({
    name,
    description,
    parameters,
    inputSchema: schema,
    annotations,
    risk: annotations.readOnly ? 'read' : 'network',
    sideEffect: annotations.readOnly ? 'read' : 'external-write',
    resumePolicy: annotations.readOnly ? 'rerun-after-check' : 'require-user-confirmation',
    async prepare() {
      return { ok: true, plan: undefined, intent: { server: caller.server, tool: listed.name, openWorld: annotations.openWorld } };
    },
    async execute(args, context) {
      try {
        const result = await caller.call(listed.name, args, { signal: context.signal, onProgress: context.progress });
        return await mapCallResult(result, context.blobs);
      } catch (error) {
        if (context.signal.aborted) return { ok: false, code: 'Cancelled', message: `${name} was cancelled` };
        const failure = failureOfError(error, caller.server);
        return { ok: false, ...failure };
      }
    },
  });
  const info: McpToolInfo = {
    ...descriptorOf(definition, schema, 'mcp'),
    server: caller.server,
    tool: listed.name,
    ...(listed.title ? { title: listed.title.slice(0, 200) } : {}),
    ...(listed.description ? { description: listed.description.slice(0, 1024) } : {}),
  };
  return { ok: true, definition, info };
};
