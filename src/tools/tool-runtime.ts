import type { ToolErrorCode, Truncation } from '../../models/tool.records.js';
import type { ToolCall } from '../../models/model.records.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ToolContext } from './tool.js';

/** The terminal outcome of one call through the tool pipeline, ready to become a `tool.settled` record. */
export interface ToolOutcome {
  status: 'ok' | 'error';
  errorCode?: ToolErrorCode;
  observation: string;
  truncated?: Truncation;
}

/** Observations longer than this many characters are cut; the full output goes to the blob store. */
export const defaultObservationLimit = 16_000;

const failure = (errorCode: ToolErrorCode, message: string): ToolOutcome => ({ status: 'error', errorCode, observation: `${errorCode}: ${message}` });

const summarizeIssues = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string =>
  issues.map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)'}: ${issue.message}`).join('; ');

/**
 * Run one tool call: lookup → schema validation → execute → truncate-to-artifact → observation.
 * Model-correctable failures come back as `status: 'error'` outcomes; an exception from a tool (an infrastructure
 * failure) propagates so the runtime can stop the turn.
 */
export const runToolCall = async (
  registry: ToolRegistry,
  call: Pick<ToolCall, 'name' | 'arguments'>,
  context: ToolContext,
  options: { observationLimit?: number; beforeExecute?: () => Promise<void> } = {},
): Promise<ToolOutcome> => {
  const tool = registry.get(call.name);
  if (!tool) return failure('InvalidInput', `unknown tool ${JSON.stringify(call.name)}; available tools: ${registry.names().join(', ')}`);
  const parsed = tool.parameters.safeParse(call.arguments);
  if (!parsed.success) {
    const received = Object.keys(call.arguments).join(', ') || 'none';
    return failure('InvalidInput', `${tool.name}: ${summarizeIssues(parsed.error.issues)} (received fields: ${received})`);
  }
  if (context.signal.aborted) return failure('Cancelled', `${tool.name} was cancelled before it started`);
  await options.beforeExecute?.();
  const result = await tool.execute(parsed.data, context);
  if (!result.ok) return failure(result.code, result.message);
  const limit = options.observationLimit ?? defaultObservationLimit;
  if (result.output.length <= limit) return { status: 'ok', observation: result.output };
  const artifact = await context.blobs.put(result.output);
  const head = result.output.slice(0, Math.floor(limit * 0.7));
  const tail = result.output.slice(result.output.length - Math.floor(limit * 0.2));
  const omittedBytes = Buffer.byteLength(result.output) - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const marker = `\n[… truncated: ${omittedBytes} bytes omitted; full output in ${artifact} (read_artifact) …]\n`;
  return { status: 'ok', observation: head + marker + tail, truncated: { omittedBytes, artifact } };
};
