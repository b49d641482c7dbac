import * as z from 'zod';
import type { AnyToolDefinition } from '../tools/tool.js';
import { toolTraitsOf } from '../tools/tool-defaults.js';
import { toolFailure } from '../tools/tool.js';
import { thrownFailure } from '../tools/os-errors.js';
import type { PluginTool } from './plugin-contract.js';


/** A JSON Schema for tool parameters must describe an object; zod builds the validator from it. */
const parametersOf = (parameters: PluginTool['parameters']): z.ZodType => {
  if (parameters instanceof z.ZodType) return parameters;
  if (typeof parameters !== 'object' || parameters === null || (parameters as { type?: unknown }).type !== 'object') throw new Error('a JSON Schema for tool parameters must have type "object"');
  return z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]);
};

/**
 * Normalise a plugin's tool into a tool definition under its full id (`<plugin>__<name>`). Its result carries
 * provenance `plugin:<id>@<version>`; a handler that throws (or returns something that is not a result) is a
 * model-visible `ToolFailed` observation, never a failure of the session (the plugin host document's T3.24). Once
 * `active()` says the plugin stopped, a call is a `ToolFailed` observation without running the handler.
 */
export const pluginToolDefinition = (options: { id: string; pluginId: string; version: string; tool: PluginTool; active?: () => boolean }): AnyToolDefinition => {
  const { id, tool } = options;
  const parameters = parametersOf(tool.parameters);
  // The schema must be advertisable to the model: fail registration, not the first model call.
  z.toJSONSchema(parameters, { io: 'input' });
  // The same traits a host tool's short form gets (`defineTool`): a call in doubt waits for confirmation unless it only reads.
  const traits = toolTraitsOf({ risk: tool.risk, ...(tool.readOnly === undefined ? {} : { readOnly: tool.readOnly }) });
  const route = `plugin:${options.pluginId}@${options.version}`;
  return {
    name: id,
    description: String(tool.description ?? ''),
    parameters,
    ...traits,
    ...(tool.timeoutMs === undefined ? {} : { timeoutMs: tool.timeoutMs }),
    async execute(args: Record<string, unknown>, context) {
      // A plugin that stopped (its harness closed, `stopPlugins`) released what its tools use: a call is refused unrun.
      if (options.active && !options.active()) return { ...toolFailure('ToolFailed', `plugin ${options.pluginId} has stopped: ${id} did not run`), provenance: { route } };
      let result: unknown;
      try {
        result = await tool.execute(args, { sessionId: context.sessionId, callId: context.callId, workspace: context.workspace.root, signal: context.signal, progress: context.progress });
      } catch (error) {
        // The one rule for every tool (tool-pipeline.ts): a throw is a failure the model reads, recorded with its class.
        return { ...thrownFailure(id, error, context.signal), provenance: { route } };
      }
      if (typeof result === 'string') return { ok: true, output: result, provenance: { route } };
      const value = result as { ok?: unknown; output?: unknown; code?: unknown; message?: unknown } | null;
      if (value?.ok === true && typeof value.output === 'string') return { ok: true, output: value.output, provenance: { route } };
      if (value?.ok === false && typeof value.message === 'string' && (value.code === 'InvalidInput' || value.code === 'NotFound' || value.code === 'Denied' || value.code === 'Timeout')) {
        return { ...toolFailure(value.code, value.message), provenance: { route } };
      }
      return { ...toolFailure('ToolFailed', `${id} returned something that is not a tool result`), provenance: { route } };
    },
  };
};
