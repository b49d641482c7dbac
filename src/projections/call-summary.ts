import type { ModelMessageToolCall } from '../../models/model-contract.js';
import type { ToolResultItem } from './context.view.js';
import { patchSummary } from '../tools/patch/patch-paths.js';

const clip = (text: string, length: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
};

/** What a call acted on, for a one-line summary: its path, command, pattern or query (a patch: the files it names). */
const targetOf = (args: Record<string, unknown>): string => {
  if (typeof args.input === 'string' && args.input.includes('*** Begin Patch')) return patchSummary(args.input);
  for (const key of ['path', 'command', 'pattern', 'query']) if (typeof args[key] === 'string') return String(args[key]);
  return '';
};

/**
 * One call and how it ended, as the model reads it in a history summary: `bash(node --test) exit 1`,
 * `glob(**\/*.js) ok`, `edit(src/a.js) error Denied`, `bash(npm run dev) running in the background`. A command is
 * judged by its exit, never by the call's status alone.
 */
export const callSummary = (call: ModelMessageToolCall, result: ToolResultItem | undefined): string => {
  const target = clip(targetOf(call.arguments), 60);
  return `${call.name}(${target}) ${outcomeOf(result)}`;
};

const outcomeOf = (result: ToolResultItem | undefined): string => {
  if (!result) return 'no result';
  if (result.status !== 'ok') return `error ${result.errorCode ?? ''}`.trim();
  const execution = result.execution;
  if (!execution) return /"background":\s*true/.test(result.observation) ? 'running in the background' : 'ok';
  if (execution.timedOut) return `timed out (${execution.timedOut})`;
  if (execution.exitCode === null) return `killed (${execution.signal ?? 'signal'})`;
  return `exit ${execution.exitCode}`;
};
