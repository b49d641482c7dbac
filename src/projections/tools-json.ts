import type { ModelToolDescription } from '../../models/model-contract.js';
import type { TokenCounter } from './token-counter.js';

/**
 * The JSON of a tool-description list and its token counts, kept per list. An agent's descriptions are built once per
 * visible set and shared by every round that shows that set (see `createActorWiring`), and each projection needs
 * them several times (the fixed blocks, every budget pass, the stored model input): serialising them once per list
 * is what keeps the schemas from costing per round. Lists are treated as immutable, as everywhere they are shared.
 */
interface ToolsText {
  json: string;
  tokens: Map<TokenCounter, number>;
}

const texts = new WeakMap<readonly ModelToolDescription[], ToolsText>();

const textOf = (tools: readonly ModelToolDescription[]): ToolsText => {
  let text = texts.get(tools);
  if (text === undefined) {
    text = { json: JSON.stringify(tools), tokens: new Map() };
    texts.set(tools, text);
  }
  return text;
};

/** `JSON.stringify(tools)`, serialised once per list. */
export const toolsJson = (tools: readonly ModelToolDescription[]): string => textOf(tools).json;

/** The tokens of the tool schemas as the model is sent them (0 for no tools), counted once per list and counter. */
export const toolSchemaTokens = (tools: readonly ModelToolDescription[], counter: TokenCounter): number => {
  if (tools.length === 0) return 0;
  const text = textOf(tools);
  let tokens = text.tokens.get(counter);
  if (tokens === undefined) {
    tokens = counter.count(text.json);
    text.tokens.set(counter, tokens);
  }
  return tokens;
};
