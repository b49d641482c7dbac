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

/** Key lists of eight or more keys seen lately, with their sorted order (a turn's CallSpec has the same 15 each time). */
const sortedOrders: Array<{ keys: readonly string[]; sorted: readonly string[] }> = [];

/**
 * `keys` in canonical order: sorted in place when short; a long list the same as a recent one (key for key) takes
 * that one's order, remembered for the last 8 lists (the returned array is not to be changed).
 */
const orderedKeys = (keys: string[]): readonly string[] => {
  const length = keys.length;
  if (length < 8) {
    if (length > 1) sortKeys(keys);
    return keys;
  }
  search: for (const order of sortedOrders) {
    if (order.keys.length !== length) continue;
    for (let index = 0; index < length; index++) if (order.keys[index] !== keys[index]) continue search;
    return order.sorted;
  }
  const original = keys.slice();
  sortKeys(keys);
  if (sortedOrders.length >= 8) sortedOrders.shift();
  sortedOrders.push({ keys: original, sorted: keys });
  return keys;
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
      const keys = orderedKeys(Object.keys(record));
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

/*
 * The same canonical JSON written straight as UTF-8 bytes (`canonicalJsonBytes`), for digests: no string is built, so
 * nothing is concatenated, flattened or encoded again before hashing. A turn digests a dozen values per round trip.
 */
const encoder = new TextEncoder();
let output = new Uint8Array(1_024);
let written = 0;

/** The buffer grown to hold `bytes` more (callers test `written + bytes > output.length` inline: no call per byte written). */
const grow = (bytes: number): void => {
  const grown = new Uint8Array(Math.max(output.length * 2, written + bytes));
  grown.set(output.subarray(0, written));
  output = grown;
};

/** UTF-8 of a text (well-formed: JSON text, whose lone surrogates `JSON.stringify` escaped). */
const writeUtf8 = (text: string): void => {
  if (written + text.length * 3 > output.length) grow(text.length * 3);
  const out = output;
  let at = written;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) {
      written = at + encoder.encodeInto(text.slice(index), out.subarray(at)).written;
      return;
    }
    out[at++] = code;
  }
  written = at;
};

/** A string's JSON (`quoteJson`) as bytes: written as it goes while nothing needs escaping or encoding. */
const writeQuoted = (text: string): void => {
  const length = text.length;
  if (written + length + 2 > output.length) grow(length + 2);
  const out = output;
  let at = written;
  out[at++] = 0x22;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || code >= 0x80) {
      writeUtf8(JSON.stringify(text));
      return;
    }
    out[at++] = code;
  }
  out[at++] = 0x22;
  written = at;
};

/** Each recent key's `"key":` bytes (bounded, as `quotedKeys`). */
const keyBytes = new Map<string, Uint8Array>();

const writeBytes = (bytes: Uint8Array): void => {
  const length = bytes.length;
  if (written + length > output.length) grow(length);
  if (length > 32) output.set(bytes, written);
  else for (let index = 0, at = written; index < length; index++, at++) output[at] = bytes[index]!;
  written += length;
};

/** The bytes of `shareCanonical` values' texts, by identity (made when first written). */
const frozenBytes = new WeakMap<object, Uint8Array>();

const writeCanonical = (value: unknown): void => {
  switch (typeof value) {
    case 'string':
      writeQuoted(value);
      return;
    case 'boolean':
      writeUtf8(value ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonical JSON cannot hold a non-finite number');
      writeUtf8(String(value));
      return;
    case 'object': {
      if (value === null) {
        writeUtf8('null');
        return;
      }
      const shared = frozenTexts.get(value);
      if (shared !== undefined) {
        let bytes = frozenBytes.get(value);
        if (bytes === undefined) frozenBytes.set(value, (bytes = encoder.encode(shared)));
        writeBytes(bytes);
        return;
      }
      if (Array.isArray(value)) {
        if (written >= output.length) grow(1);
        output[written++] = 0x5b;
        for (let index = 0; index < value.length; index++) {
          if (index > 0) {
            if (written >= output.length) grow(1);
            output[written++] = 0x2c;
          }
          const item: unknown = value[index];
          if (item === undefined) writeUtf8('null');
          else writeCanonical(item);
        }
        if (written >= output.length) grow(1);
        output[written++] = 0x5d;
        return;
      }
      const record = value as Record<string, unknown>;
      const keys = orderedKeys(Object.keys(record));
      if (written >= output.length) grow(1);
      output[written++] = 0x7b;
      let first = true;
      for (const key of keys) {
        const member = record[key];
        if (member === undefined) continue;
        if (!first) {
          if (written >= output.length) grow(1);
          output[written++] = 0x2c;
        }
        first = false;
        let bytes = keyBytes.get(key);
        if (bytes === undefined) {
          bytes = encoder.encode(quotedKey(key));
          if (keyBytes.size >= quotedKeyCapacity) keyBytes.clear();
          keyBytes.set(key, bytes);
        }
        // `writeBytes`, inlined: a key is written per member (a few dozen per round trip).
        const length = bytes.length;
        if (written + length > output.length) grow(length);
        if (length > 32) output.set(bytes, written);
        else for (let index = 0, at = written; index < length; index++, at++) output[at] = bytes[index]!;
        written += length;
        writeCanonical(member);
      }
      if (written >= output.length) grow(1);
      output[written++] = 0x7d;
      return;
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
};

/**
 * `canonicalJson(value)` as UTF-8 bytes: the first `length` bytes of `bytes`, a buffer shared by every call (read it
 * before the next call). Refuses what `canonicalJson` refuses, with the same errors.
 */
export const canonicalJsonBytes = (value: unknown): { bytes: Uint8Array; length: number } => {
  written = 0;
  writeCanonical(value);
  return { bytes: output, length: written };
};
