/** Object keys as JSON strings, `"key":` (keys repeat across values: quoting them once is cheaper). Bounded. */
const quotedKeys = new Map<string, string>();
const quotedKeyCapacity = 4_096;

const quotedKey = (key: string): string => {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    if (quotedKeys.size < quotedKeyCapacity) quotedKeys.set(key, quoted);
  }
  return quoted;
};

/** The canonical JSON of values `shareCanonical` froze, by identity (a frozen value cannot change under its text). */
const frozenTexts = new WeakMap<object, string>();

const deepFreeze = (value: unknown): void => {
  if (typeof value !== 'object' || value === null) return;
  // A frozen object may still hold mutable members: every level is frozen.
  for (const member of Object.values(value)) deepFreeze(member);
  Object.freeze(value);
};

/**
 * Freeze `value` deeply and remember its canonical JSON, so every value that holds it (by reference) serialises it for
 * free: a session's CallSpecs share their policy members, and each turn digests its whole CallSpec. Only for values
 * built to be shared and never changed afterwards (a change would now throw).
 */
export const shareCanonical = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !frozenTexts.has(value)) {
    deepFreeze(value);
    frozenTexts.set(value, canonicalJson(value));
  }
  return value;
};

/**
 * Sort keys by UTF-16 code units, as `Array.prototype.sort` does by default: an insertion sort for the few keys a
 * record has (often already in order), which skips the builtin's comparator calls; the builtin for many keys.
 */
const sortKeys = (keys: string[]): void => {
  const length = keys.length;
  if (length > 24) {
    keys.sort();
    return;
  }
  for (let index = 1; index < length; index++) {
    const key = keys[index]!;
    let at = index - 1;
    if (keys[at]! < key) continue;
    while (at >= 0 && keys[at]! > key) {
      keys[at + 1] = keys[at]!;
      at--;
    }
    keys[at + 1] = key;
  }
};

/**
 * `JSON.stringify` of a string: the string quoted as it is when nothing in it needs escaping (no quote, backslash,
 * control character or surrogate — a lone surrogate is escaped, a pair is not, and the builtin tells them apart), else
 * the builtin. A turn's witnesses quote a few dozen short strings (ids, names, statuses, digests); the builtin's call
 * cost more than the scan. Long strings go to the builtin at once.
 */
export const quoteJson = (text: string): string => {
  const length = text.length;
  if (length > 256) return JSON.stringify(text);
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
};

/**
 * Canonical JSON: object keys sorted by code point, no whitespace, `undefined` members omitted, non-finite numbers
 * refused. Two values that mean the same data always serialise to the same string, so their digests agree.
 */
export const canonicalJson = (value: unknown): string => {
  switch (typeof value) {
    case 'string':
      return quoteJson(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonical JSON cannot hold a non-finite number');
      // A finite number's JSON is its `String` (ECMA-262 SerializeJSONProperty: Number::toString; -0 gives "0" in both).
      return String(value);
    case 'object': {
      if (value === null) return 'null';
      const shared = frozenTexts.get(value);
      if (shared !== undefined) return shared;
      if (Array.isArray(value)) {
        let out = '[';
        for (let index = 0; index < value.length; index++) {
          if (index > 0) out += ',';
          const item: unknown = value[index];
          out += item === undefined ? 'null' : canonicalJson(item);
        }
        return `${out}]`;
      }
      const record = value as Record<string, unknown>;
      // Default sort compares UTF-16 code units, which orders keys the same way for every input.
      const keys = Object.keys(record);
      if (keys.length > 1) sortKeys(keys);
      let out = '{';
      let first = true;
      for (const key of keys) {
        const member = record[key];
        if (member === undefined) continue;
        if (!first) out += ',';
        first = false;
        out += quotedKey(key) + canonicalJson(member);
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
};
