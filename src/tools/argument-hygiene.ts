import type { ArgumentProblem } from '../../models/model.records.js';

/** Deepest nesting kept in tool arguments; anything deeper is replaced (and the call refused). */
export const maxArgumentDepth = 64;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const loneSurrogates = new RegExp(loneSurrogate.source, 'g');

/** A string with every lone surrogate replaced by U+FFFD (what UTF-8 storage would silently make of it). */
export const wellFormed = (text: string): string => (loneSurrogate.test(text) ? text.replace(loneSurrogates, '\uFFFD') : text);

const join = (path: string, key: string | number): string => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

/** An object as JSON has them: a plain object literal (or one with no prototype), never a class instance or a Map. */
const plainObject = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

/**
 * Make a model's tool arguments storable exactly as the runtime will use them — the one normalisation every call goes
 * through before it is recorded, so canonical JSON, the record codec, replay and resume all see the same value:
 * - JSON's own meanings are applied silently: `-0` is `0`, a member that is `undefined` is left out, an array hole or
 *   `undefined` element is `null`;
 * - a value no log can hold faithfully is replaced and listed with its dotted path: a non-finite number (`null`), a
 *   lone surrogate in a value or a key (U+FFFD), nesting past `maxArgumentDepth` (`null`), a value that is not JSON
 *   — a custom provider's `Map`, `Set`, `BigInt`, `Date`, function or class instance (`null`; `{}` for the whole) —
 *   and a `__proto__` key (left out: as an own property it changes meaning in every layer that copies objects);
 * the pipeline refuses a call with problems (`InvalidInput`, naming the fields). Pure; the result is always a fresh
 * plain object built from own enumerable string keys, so a getter or a prototype of the input is never kept.
 */
export const normaliseArguments = (args: unknown): { value: Record<string, unknown>; problems: ArgumentProblem[] } => {
  const problems: ArgumentProblem[] = [];
  const clean = (value: unknown, path: string, depth: number): unknown => {
    switch (typeof value) {
      case 'number':
        if (Number.isFinite(value)) return value === 0 ? 0 : value;
        problems.push({ path, problem: 'non_finite_number' });
        return null;
      case 'string':
        if (!loneSurrogate.test(value)) return value;
        problems.push({ path, problem: 'lone_surrogate' });
        return wellFormed(value);
      case 'boolean':
        return value;
      case 'undefined':
        return null;
      case 'object':
        break;
      default:
        problems.push({ path, problem: 'not_json' });
        return null;
    }
    if (value === null) return null;
    if (depth >= maxArgumentDepth) {
      problems.push({ path, problem: 'too_deep' });
      return null;
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (let index = 0; index < value.length; index++) out.push(clean(value[index], join(path, index), depth + 1));
      return out;
    }
    if (!plainObject(value)) {
      problems.push({ path, problem: 'not_json' });
      return null;
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) continue;
      const safeKey = wellFormed(key);
      if (safeKey !== key) problems.push({ path: join(path, safeKey), problem: 'lone_surrogate' });
      if (safeKey === '__proto__') {
        problems.push({ path: join(path, safeKey), problem: 'reserved_key' });
        continue;
      }
      out[safeKey] = clean(item, join(path, safeKey), depth + 1);
    }
    return out;
  };
  if (typeof args !== 'object' || args === null || Array.isArray(args) || !plainObject(args)) {
    problems.push({ path: '', problem: 'not_json' });
    return { value: {}, problems };
  }
  return { value: clean(args, '', 0) as Record<string, unknown>, problems };
};

const said: Record<ArgumentProblem['problem'], string> = {
  non_finite_number: 'is not a finite number (JSON cannot carry it; send a plain number)',
  lone_surrogate: 'holds a lone UTF-16 surrogate (not text; send valid Unicode)',
  too_deep: `is nested deeper than ${maxArgumentDepth} levels`,
  not_json: 'is not a JSON value (a Map, Set, BigInt, date, function or class instance; send plain JSON)',
  reserved_key: 'is a key rein does not accept (it would change what copies of the object mean; rename it)',
};

/** The model-facing sentence for a call's argument problems, each field named. */
export const describeArgumentProblems = (problems: readonly ArgumentProblem[]): string =>
  problems.map((entry) => `\`${entry.path || '(arguments)'}\` ${said[entry.problem]}`).join('; ');
