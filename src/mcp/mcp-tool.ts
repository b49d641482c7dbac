import type { McpToolInfo, McpToolProblem } from '../../models/mcp.records.js';
import { descriptorOf } from '../capabilities/catalog.js';
import { defineTool, type AnyToolDefinition, type ToolAnnotations } from '../tools/tool.js';
import { processArea } from '../areas/process-loader.js';
import type { ToolNote, ToolResult } from '../tools/tool.js';
import { describeMcpArguments, mcpTarget, protectedArgument } from './mcp-arguments.js';
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
 * The risk an approval names for a tool, from its hints: `read` for a read-only tool, `network` for one the server
 * says reaches an open world (`openWorldHint: true`), `write` for every other (it changes something: a file, a record).
 */
export const riskOf = (hints: McpListedTool['annotations'] = {}): 'read' | 'write' | 'network' => (hints.readOnlyHint === true ? 'read' : hints.openWorldHint === true ? 'network' : 'write');

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
    risk: riskOf(listed.annotations),
    sideEffect: annotations.readOnly ? 'read' : 'external-write',
    resumePolicy: annotations.readOnly ? 'rerun-after-check' : 'require-user-confirmation',
    async prepare(args, context) {
      // A server acts outside the workspace boundary the file tools keep: a call naming a protected path is refused
      // as theirs would be, whatever the person or the rules would say.
      const named = protectedArgument(args, context.workspace, { readOnly: annotations.readOnly });
      if (named) return { ok: false, code: 'Denied', message: `\`${named.argument}\` names ${named.path}, a protected path: no MCP server may act on it. Nothing was run.`, reason: 'protected_path' };
      const target = mcpTarget(args, context.workspace);
      return { ok: true, plan: undefined, subject: { ...(target === undefined ? {} : { target }), details: describeMcpArguments(args) }, intent: { server: caller.server, tool: listed.name, openWorld: annotations.openWorld } };
    },
    async execute(args, context) {
      const call = async (): Promise<ToolResult> => {
        try {
          return await mapCallResult(await caller.call(listed.name, args, { signal: context.signal, onProgress: context.progress }), context.blobs);
        } catch (error) {
          return context.signal.aborted ? { ok: false, code: 'Cancelled', message: `${name} was cancelled` } : { ok: false, ...failureOfError(error, caller.server) };
        }
      };
      // A tool its server says changes nothing is not swept (a server that lies about it is code no sweep contains).
      if (annotations.readOnly) return call();
      // A server on the host is not held by the sandbox: the protected paths are checked after every call that may
      // change something, as after `bash` (created ones removed), and any it changed are put back as they were.
      const { absentProtectedPaths, snapshotProtected, removeCreatedProtectedPaths, restoreProtected } = await processArea();
      const absent = await absentProtectedPaths(context.workspace);
      const before = snapshotProtected(context.workspace);
      const result = await call();
      const created = await removeCreatedProtectedPaths(context.workspace, absent);
      const { removed, restored } = await restoreProtected(context.workspace, before);
      const notes: ToolNote[] = [
        ...([...new Set([...created, ...removed])].length > 0 ? [{ type: 'workspace.cleaned', data: { paths: [...new Set([...created, ...removed])], reason: 'protected-path-created' } }] : []),
        ...(restored.length > 0 ? [{ type: 'workspace.cleaned', data: { paths: restored, reason: 'protected-path-changed' } }] : []),
      ];
      if (notes.length === 0) return result;
      const said = `rein undid what the call did to protected paths (${[...created, ...removed, ...restored].join(', ')})`;
      return result.ok ? { ...result, output: `${result.output}\n[${said}]`, notes: [...(result.notes ?? []), ...notes] } : { ...result, message: `${result.message} [${said}]`, notes: [...(result.notes ?? []), ...notes] };
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
