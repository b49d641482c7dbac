import { hostFileProblem, readHostFile } from '../util/read-regular-file.js';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import { Script, type ScriptInput, type ScriptTurn } from '../../models/script.js';
import { ReinError } from '../host/host-errors.js';
import type { ModelProvider } from './provider.js';
import { jsonProblem } from '../util/json-problem.js';

/** Rough token estimate for scripted usage: one token per four characters, at least one. */
const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

const turnFor = (script: Script, request: ModelRequest): ScriptTurn | undefined => {
  const turns = request.role === undefined ? script.turns : script.agents[request.role]?.turns;
  return turns?.[request.turn - 1];
};

/** Parse and validate a script object; a malformed script is a `SCRIPT_INVALID` error naming the problem. */
export const parseScript = (value: unknown, source = 'script'): Script => {
  const parsed = Script.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    throw new ReinError('SCRIPT_INVALID', `${source} is not a valid script: ${problems}`);
  }
  return parsed.data;
};

/** Read a JSON script file from disk (a regular file: `SCRIPT_INVALID` otherwise) and validate it. */
export const loadScript = async (path: string): Promise<Script> => {
  // Read without blocking and only as a regular file: a workspace's rein.config.json may name the script, and a FIFO
  // there must not hang the run.
  const read = await readHostFile(path);
  if (!read.ok) throw new ReinError('SCRIPT_INVALID', read.reason === 'not_a_file' ? `script ${hostFileProblem(path, read)}` : `cannot read script ${path}: ${hostFileProblem(path, read)}`);
  const text = read.bytes.toString('utf8');
  try {
    const script = parseScript(JSON.parse(text), path);
    // A script with no turn fails its first model call: said now, before anything runs or is recorded.
    if (script.turns.length === 0) throw new ReinError('SCRIPT_INVALID', `${path} is not a valid script: turns: a script needs at least one turn (the first model call plays it)`);
    return script;
  } catch (error) {
    if (error instanceof ReinError) throw error;
    throw new ReinError('SCRIPT_INVALID', `${path} is not valid JSON (${jsonProblem(text, error)})`, { cause: error });
  }
};

/** The scripted provider: a `ModelProvider` that also carries the script it plays (what `rein.submit` queues for a worker). */
export interface ScriptedProvider extends ModelProvider {
  readonly name: 'scripted';
  readonly script: Script;
}

/**
 * The embedded default model: plays a script's turns in order (`agents.<role>.turns` for child agents), streaming
 * text in a few chunks like a real model would. Running out of turns is a `script_exhausted` provider error. The
 * script may be given as written (`ScriptInput`) or parsed; a malformed one is `SCRIPT_INVALID` here.
 */
export const createScriptedProvider = (input: Script | ScriptInput, options: { source?: string } = {}): ScriptedProvider => {
  const script = parseScript(input, options.source);
  return {
    name: 'scripted',
    script,
    model: 'script',
    ...(options.source === undefined ? {} : { source: options.source }),
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      yield { type: 'started', model: 'script' };
      const turn = turnFor(script, request);
      if (!turn) {
        const who = request.role === undefined ? 'the script' : `agents.${request.role}`;
        yield { type: 'error', error: { code: 'script_exhausted', message: `${who} has no turn ${request.turn}`, retryable: false } };
        return;
      }
      if (turn.reasoning) yield { type: 'reasoning-delta', text: turn.reasoning };
      for (let index = 0; index < turn.text.length; index += 64) yield { type: 'text-delta', text: turn.text.slice(index, index + 64) };
      for (const [index, call] of turn.toolCalls.entries()) {
        yield { type: 'tool-intent', providerCallId: `script-${request.turn}-${index}`, name: call.name, arguments: call.arguments };
      }
      const last = request.messages[request.messages.length - 1];
      const input = estimateTokens(last ? last.content : '');
      yield { type: 'usage', usage: turn.usage ?? { inputTokens: input, outputTokens: estimateTokens(turn.text + JSON.stringify(turn.toolCalls)) } };
      yield { type: 'finished', stopReason: turn.stopReason ?? (turn.toolCalls.length > 0 ? 'tool_use' : 'end_turn') };
    },
  };
};
