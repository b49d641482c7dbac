import type { ArgumentProblem } from '../../models/model.records.js';

/** Deepest nesting kept in tool arguments; anything deeper is replaced (and the call refused). */
export const maxArgumentDepth = 64;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const loneSurrogates = new RegExp(loneSurrogate.source, 'g');

/** A string with every lone surrogate replaced by U+FFFD (what UTF-8 storage would silently make of it). */
export const wellFormed = (text: string): string => (loneSurrogate.test(text) ? text.replace(loneSurrogates, '\uFFFD') : text);

const join = (path: string, key: string | number): string => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

/**
 * Make a model's tool arguments storable exactly as the runtime will use them: non-finite numbers become `null`,
 * lone surrogates (in values and keys) U+FFFD, nesting past `maxArgumentDepth` `null` — each replacement listed with
 * its dotted path. Canonical JSON, the record codec and replay then all see the same value; the pipeline refuses a
 * call with problems (`InvalidInput`, naming the fields). Pure; arguments without problems come back unchanged.
 */
export const sanitizeArguments = (args: Record<string, unknown>): { value: Record<string, unknown>; problems: ArgumentProblem[] } => {
  const problems: ArgumentProblem[] = [];
  const clean = (value: unknown, path: string, depth: number): unknown => {
    if (typeof value === 'number') {
      if (Number.isFinite(value)) return value;
      problems.push({ path, problem: 'non_finite_number' });
      return null;
    }
    if (typeof value === 'string') {
      if (!loneSurrogate.test(value)) return value;
      problems.push({ path, problem: 'lone_surrogate' });
      return wellFormed(value);
    }
    if (typeof value !== 'object' || value === null) return value;
    if (depth >= maxArgumentDepth) {
      problems.push({ path, problem: 'too_deep' });
      return null;
    }
    if (Array.isArray(value)) return value.map((item, index) => clean(item, join(path, index), depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const safeKey = wellFormed(key);
      if (safeKey !== key) problems.push({ path: join(path, safeKey), problem: 'lone_surrogate' });
      out[safeKey] = clean(item, join(path, safeKey), depth + 1);
    }
    return out;
  };
  const value = clean(args, '', 0) as Record<string, unknown>;
  return problems.length === 0 ? { value: args, problems } : { value, problems };
};

const said: Record<ArgumentProblem['problem'], string> = {
  non_finite_number: 'is not a finite number (JSON cannot carry it; send a plain number)',
  lone_surrogate: 'holds a lone UTF-16 surrogate (not text; send valid Unicode)',
  too_deep: `is nested deeper than ${maxArgumentDepth} levels`,
};

/** The model-facing sentence for a call's argument problems, each field named. */
export const describeArgumentProblems = (problems: readonly ArgumentProblem[]): string =>
  problems.map((entry) => `\`${entry.path || '(arguments)'}\` ${said[entry.problem]}`).join('; ');
