/** Counts tokens the way one model family does; `name` is recorded in every `context.projected`. */
export interface TokenCounter {
  readonly name: string;
  count(text: string): number;
}

/**
 * The documented estimate for models without an offline tokenizer: one token per three characters, rounded up.
 * Real tokenizers give 3.5–4.5 characters per token for English prose and 2.5–3.5 for code, so this errs on the
 * side of over-counting and budgets stay safe.
 */
export const estimateTokenCounter: TokenCounter = { name: 'estimate:chars/3', count: (text) => Math.ceil(text.length / 3) };

const O200K = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|gpt-oss|codex)/i;
const CL100K = /^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada)/i;

/** The offline encoding `gpt-tokenizer` has for an OpenAI-style model name, if any. */
export const encodingFor = (model: string | undefined): 'o200k_base' | 'cl100k_base' | undefined => {
  if (!model) return undefined;
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  if (O200K.test(name)) return 'o200k_base';
  if (CL100K.test(name)) return 'cl100k_base';
  return undefined;
};

const cached = (name: string, count: (text: string) => number, capacity = 4096): TokenCounter => {
  const memo = new Map<string, number>();
  return {
    name,
    count(text) {
      if (text.length < 64) return count(text);
      const known = memo.get(text);
      if (known !== undefined) return known;
      const value = count(text);
      if (memo.size >= capacity) memo.delete(memo.keys().next().value as string);
      memo.set(text, value);
      return value;
    },
  };
};

/**
 * The token counter for a model: `gpt-tokenizer` (offline BPE tables, loaded on first use) for OpenAI-style models,
 * the documented estimate for everything else. Counts of long texts are memoised, so re-projecting an unchanged
 * item costs a map lookup.
 */
export const tokenCounterFor = async (model: string | undefined): Promise<TokenCounter> => {
  const encoding = encodingFor(model);
  if (encoding === 'o200k_base') {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    return cached(`gpt-tokenizer:${encoding}`, (text) => countTokens(text));
  }
  if (encoding === 'cl100k_base') {
    const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');
    return cached(`gpt-tokenizer:${encoding}`, (text) => countTokens(text));
  }
  return estimateTokenCounter;
};
