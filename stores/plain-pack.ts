/*
 * A msgpack writer for plain data that produces exactly the bytes the codec's pinned msgpackr Packr produces
 * (RECORD_CODEC_OPTIONS: plain maps, `undefined` map values skipped, preferred sizes), only faster: msgpackr's
 * `skipValues` path collects every map's keys into an array and searches the skip list per value, which made packing
 * the largest single cost of an in-memory append. Anything outside plain data (a class instance, a Map, a byte array,
 * `undefined` outside a map, a bigint, a function, a cycle) makes `packPlain` give up, and the caller packs the whole
 * value with msgpackr instead, so stored bytes never depend on which writer ran (tests/stores/plain-pack.prop.test.ts
 * compares the two on arbitrary values).
 *
 * What made it slow inside a session (measured: twice its cost on the same records in a fresh process) is that one
 * writer sees every record shape and string representation, so `charCodeAt` and the property loads turn megamorphic.
 * Three things keep it fast there: a map key's bytes are remembered (keys repeat: a record's field names), a string
 * value is written by the native UTF-8 writer, and a deeply frozen subtree (a CallSpec's shared members, frozen by
 * `shareCanonical`) is packed once and its bytes copied after that.
 */

/** Thrown inside the writer when a value is not plain data; never escapes `packPlain`. */
const notPlain = new Error('not plain data');

/** Nesting deeper than this is left to msgpackr (which reports cycles and stack exhaustion as it always did). */
const maxDepth = 256;

/**
 * Strings some values hold are written as a msgpack extension instead (packed-digests.ts: a digest as its bytes), the
 * way msgpackr writes an extension class's `pack` result. Only strings inside an `ExtensionScope` are offered, never
 * map keys.
 */
export interface StringExtension {
  /** The extension type byte. */
  type: number;
  /** Strings shorter than this are written as strings without asking `dataOf`. */
  minLength: number;
  /** The extension's data for `value`, or undefined to write it as a string. */
  dataOf: (value: string) => Uint8Array | undefined;
}

/** A value whose strings the writer offers to its `StringExtension` (the scope itself writes nothing of its own). */
export class ExtensionScope {
  constructor(readonly value: unknown) {}
}

/** `Buffer`'s native UTF-8 writer (Node's own, undeclared in its types; `Buffer.write` calls it after checking its arguments). */
interface Utf8Writable {
  utf8Write(value: string, offset: number, length: number): number;
}

const scratch = (size: number): Buffer & Utf8Writable => Buffer.allocUnsafe(size) as unknown as Buffer & Utf8Writable;

/**
 * The writer's state lives in a closure, not in module bindings: V8 checks a module-level `let` for its temporal dead
 * zone on every access, and the byte loops were slower than msgpackr's until the state moved here. Without an
 * `extension`, an `ExtensionScope` is not plain data.
 */
const createWriter = (extension?: StringExtension) => {
  let target = scratch(64 * 1024);
  let view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  let position = 0;
  /** Below this position a number, a literal or a container header always fits. */
  let safeEnd = target.length - 10;
  /** Inside an `ExtensionScope`: strings are offered to the extension. */
  let scoped = false;
  /** Whether the value being packed holds a map key named `__proto__` (a read returns it renamed). */
  let protoKey = false;
  /**
   * Counts what makes a subtree's bytes unfit to keep: an object that is not frozen (it may change), a frozen one with
   * an accessor, a `__proto__` key. A frozen object's bytes are kept when nothing was counted while it was written.
   */
  let unsharable = 0;

  const ensure = (bytes: number): void => {
    if (position + bytes <= target.length) return;
    const grown = scratch(Math.max(target.length * 2, position + bytes + 1024));
    target.copy(grown, 0, 0, position);
    target = grown;
    view = new DataView(target.buffer, target.byteOffset, target.byteLength);
    safeEnd = target.length - 10;
  };

  const writeString = (value: string): void => {
    const units = value.length;
    // Like msgpackr: guess the header from the UTF-16 length, write the bytes after it, move them if the guess was short.
    const headerSize = units < 0x20 ? 1 : units < 0x100 ? 2 : units < 0x10000 ? 3 : 5;
    // Checked here, `ensure` called only to grow: a call per string was a fifth of the writer's calls.
    if (position + headerSize + units * 3 > target.length) ensure(headerSize + units * 3);
    // The native writer (what `Buffer.write` calls, without its argument checks): lone surrogates become U+FFFD, as
    // msgpackr writes them. A byte loop over `charCodeAt` was as fast in a fresh process and twice as slow in a session.
    const length = target.utf8Write(value, position + headerSize, units * 3);
    if (length < 0x20) {
      target[position++] = 0xa0 | length;
    } else if (length < 0x100) {
      if (headerSize < 2) target.copyWithin(position + 2, position + 1, position + 1 + length);
      target[position++] = 0xd9;
      target[position++] = length;
    } else if (length < 0x10000) {
      if (headerSize < 3) target.copyWithin(position + 3, position + headerSize, position + headerSize + length);
      target[position++] = 0xda;
      target[position++] = length >> 8;
      target[position++] = length & 0xff;
    } else {
      if (headerSize < 5) target.copyWithin(position + 5, position + headerSize, position + headerSize + length);
      target[position++] = 0xdb;
      view.setUint32(position, length);
      position += 4;
    }
    position += length;
  };

  /** Copies bytes written earlier (a remembered key or subtree) to the position. */
  const writeBytes = (bytes: Uint8Array): void => {
    const length = bytes.length;
    if (position + length > target.length) ensure(length);
    if (length > 32) {
      target.set(bytes, position);
      position += length;
      return;
    }
    const out = target;
    let at = position;
    for (let index = 0; index < length; index++) out[at++] = bytes[index]!;
    position = at;
  };

  /** Each recent map key's bytes (header and UTF-8), by the key: a session's records repeat their field names. */
  const keyBytes = new Map<string, Uint8Array>();
  const keyBytesCapacity = 4_096;

  const writeKey = (key: string): void => {
    const known = keyBytes.get(key);
    if (known !== undefined) {
      // `writeBytes` written out for a key (a few bytes, once per map entry: a call per key was as many as the writes).
      const length = known.length;
      if (position + length > target.length) ensure(length);
      const out = target;
      let at = position;
      for (let index = 0; index < length; index++) out[at++] = known[index]!;
      position = at;
      return;
    }
    const start = position;
    writeString(key);
    if (key.length < 0x40) {
      if (keyBytes.size >= keyBytesCapacity) keyBytes.clear();
      keyBytes.set(key, new Uint8Array(target.subarray(start, position)));
    }
  };

  /**
   * The bytes of deeply frozen objects and arrays, by identity (weakly: they go with their object); one map outside an
   * `ExtensionScope`, one inside (where the same strings may be written as extensions).
   */
  const frozenBytesOutside = new WeakMap<object, Uint8Array>();
  const frozenBytesInside = new WeakMap<object, Uint8Array>();

  const writeNumber = (value: number): void => {
    if (value >>> 0 === value) {
      if (value < 0x80) {
        target[position++] = value;
      } else if (value < 0x100) {
        target[position++] = 0xcc;
        target[position++] = value;
      } else if (value < 0x10000) {
        target[position++] = 0xcd;
        target[position++] = value >> 8;
        target[position++] = value & 0xff;
      } else {
        target[position++] = 0xce;
        view.setUint32(position, value);
        position += 4;
      }
    } else if (value >> 0 === value) {
      if (value >= -0x20) {
        target[position++] = 0x100 + value;
      } else if (value >= -0x80) {
        target[position++] = 0xd0;
        target[position++] = value + 0x100;
      } else if (value >= -0x8000) {
        target[position++] = 0xd1;
        view.setInt16(position, value);
        position += 2;
      } else {
        target[position++] = 0xd2;
        view.setInt32(position, value);
        position += 4;
      }
    } else {
      target[position++] = 0xcb;
      view.setFloat64(position, value);
      position += 8;
    }
  };

  /** Writes a container's size header at `at`, where one byte was reserved, moving what follows if it needs more. */
  const writeSize = (at: number, size: number, small: number, medium: number): void => {
    if (size < 0x10) {
      target[at] = small | size;
      return;
    }
    const extra = size < 0x10000 ? 2 : 4;
    ensure(extra);
    target.copyWithin(at + 1 + extra, at + 1, position);
    position += extra;
    if (size < 0x10000) {
      target[at] = medium;
      target[at + 1] = size >> 8;
      target[at + 2] = size & 0xff;
    } else {
      target[at] = medium + 1;
      view.setUint32(at + 1, size);
    }
  };

  const writeArray = (items: unknown[], depth: number): void => {
    const length = items.length;
    if (length < 0x10) {
      target[position++] = 0x90 | length;
    } else if (length < 0x10000) {
      target[position++] = 0xdc;
      target[position++] = length >> 8;
      target[position++] = length & 0xff;
    } else {
      target[position++] = 0xdd;
      view.setUint32(position, length);
      position += 4;
    }
    for (let index = 0; index < length; index++) {
      const item = items[index];
      // msgpackr writes undefined (and holes) as an extension: leave those to it.
      if (item === undefined) throw notPlain;
      write(item, depth + 1);
    }
  };

  const writeMap = (record: Record<string, unknown>, depth: number): void => {
    const at = position++;
    let size = 0;
    // Own enumerable keys in for-in order: what msgpackr's for-in with its own-property check visits.
    const keys = Object.keys(record);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      // msgpackr asks the object's own `hasOwnProperty`; an object that redefines it is left to msgpackr.
      if (key === 'hasOwnProperty') throw notPlain;
      const item = record[key];
      if (item === undefined) continue;
      if (key === '__proto__') {
        protoKey = true;
        unsharable++;
      }
      writeKey(key);
      write(item, depth + 1);
      size++;
    }
    writeSize(at, size, 0x80, 0xde);
  };

  /**
   * A frozen object or array: its bytes when kept, else written and kept if everything under it is frozen data (a
   * frozen object cannot change, so neither can its bytes; an accessor could, and is not kept).
   */
  const writeFrozen = (value: object, isArray: boolean, depth: number): void => {
    const frozenBytes = scoped ? frozenBytesInside : frozenBytesOutside;
    const kept = frozenBytes.get(value);
    if (kept !== undefined) {
      writeBytes(kept);
      return;
    }
    const start = position;
    const before = unsharable;
    if (isArray) writeArray(value as unknown[], depth);
    else writeMap(value as Record<string, unknown>, depth);
    if (unsharable === before && dataOnly(value)) frozenBytes.set(value, new Uint8Array(target.subarray(start, position)));
    else unsharable++;
  };

  /** An extension's data, with the header msgpackr's `writeExtensionData` writes for its length. */
  const writeExtension = (type: number, data: Uint8Array): void => {
    const length = data.length;
    ensure(length + 6);
    const fixed = length === 1 ? 0xd4 : length === 2 ? 0xd5 : length === 4 ? 0xd6 : length === 8 ? 0xd7 : length === 16 ? 0xd8 : 0;
    if (fixed !== 0) target[position++] = fixed;
    else if (length < 0x100) {
      target[position++] = 0xc7;
      target[position++] = length;
    } else if (length < 0x10000) {
      target[position++] = 0xc8;
      target[position++] = length >> 8;
      target[position++] = length & 0xff;
    } else {
      target[position++] = 0xc9;
      view.setUint32(position, length);
      position += 4;
    }
    target[position++] = type;
    target.set(data, position);
    position += length;
  };

  const write = (value: unknown, depth: number): void => {
    if (position > safeEnd) ensure(16);
    switch (typeof value) {
      case 'string':
        if (scoped && value.length >= extension!.minLength) {
          const data = extension!.dataOf(value);
          if (data !== undefined) {
            writeExtension(extension!.type, data);
            return;
          }
        }
        writeString(value);
        return;
      case 'number':
        writeNumber(value);
        return;
      case 'boolean':
        target[position++] = value ? 0xc3 : 0xc2;
        return;
      case 'object': {
        if (value === null) {
          target[position++] = 0xc0;
          return;
        }
        if (depth >= maxDepth) throw notPlain;
        const constructor = (value as { constructor?: unknown }).constructor;
        if (constructor === ExtensionScope && extension !== undefined && !scoped) {
          scoped = true;
          write((value as ExtensionScope).value, depth + 1);
          scoped = false;
          return;
        }
        if (constructor !== Array && constructor !== Object) throw notPlain;
        if (Object.isFrozen(value)) {
          writeFrozen(value, constructor === Array, depth);
          return;
        }
        unsharable++;
        if (constructor === Array) writeArray(value as unknown[], depth);
        else writeMap(value as Record<string, unknown>, depth);
        return;
      }
      default:
        throw notPlain;
    }
  };

  const pack = (value: unknown, headerLength: number): Buffer | undefined => {
    position = headerLength;
    protoKey = false;
    scoped = false;
    ensure(0);
    try {
      write(value, 0);
    } catch (error) {
      if (error === notPlain || error instanceof RangeError) return undefined;
      throw error;
    }
    return target.subarray(0, position);
  };
  return { pack, protoKey: () => protoKey };
};

/** Whether every own property of a frozen object or array is a data property (checked once, when its bytes are kept). */
const dataOnly = (value: object): boolean => {
  const descriptors = Object.getOwnPropertyDescriptors(value);
  for (const key in descriptors) if (descriptors[key]!.get !== undefined) return false;
  return true;
};


/**
 * A writer (see `packPlain`), offering the strings inside an `ExtensionScope` to `extension` (packed-digests.ts:
 * `packPlainDigests`).
 */
export const createPlainWriter = (extension?: StringExtension): ((value: unknown, headerLength: number) => Buffer | undefined) => createWriter(extension).pack;

const writer = createWriter();

/**
 * The msgpack bytes of `value` behind `headerLength` reserved bytes, in a scratch buffer valid until the next call;
 * undefined when `value` is not plain data (then pack it with msgpackr).
 */
export const packPlain: (value: unknown, headerLength: number) => Buffer | undefined = writer.pack;

/**
 * Whether the last value `packPlain` wrote held a map key named `__proto__` (at any depth): msgpackr reads such a key
 * back renamed, so those bytes are not what a read returns. Exact, where searching the bytes for the key would also
 * find a string value that happens to be `__proto__`.
 */
export const packedProtoKey: () => boolean = writer.protoKey;
