import { addExtension } from 'msgpackr';
import { createPlainWriter } from './plain-pack.js';

/**
 * Digests stored as their 32 bytes rather than 64 hex characters. A step's records carry a handful of BLAKE3 and
 * SHA-256 digests that are unique to the step (the typestate's join digests, a model input's artifact ref); Snappy
 * cannot shrink hex, so each cost 64 bytes on disk. In the packed record layout such a string is written as a
 * msgpack extension of 33 bytes (a prefix code, then the digest) and read back as the same string, so what a read
 * returns is unchanged. Only lower-case hex after a known prefix is packed; anything else stays a string.
 */
const PREFIXES = ['b3:', 'sha256:', 'artifact://blake3/'] as const;

/** The msgpack extension type of a packed digest (msgpackr's own types are 0, 0x42, 0x62, 0x65, 0x69, 0x70, 0x73, 0x74, 0x78, 0xff). */
export const PACKED_DIGEST_EXTENSION = 0x31;

const HEX_LENGTH = 64;

/** A digest string on its way into a packed row (only the encoder ever makes one). */
class PackedDigest {
  constructor(
    readonly prefix: number,
    readonly hex: string,
  ) {}
}

const isLowerHex = (text: string, from: number): boolean => {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (!((code >= 48 && code <= 57) || (code >= 97 && code <= 102))) return false;
  }
  return true;
};

/** The index in `PREFIXES` of a packable digest string, or -1. */
const prefixOf = (text: string): number => {
  for (let index = 0; index < PREFIXES.length; index++) {
    const prefix = PREFIXES[index]!;
    if (text.length === prefix.length + HEX_LENGTH && text.startsWith(prefix) && isLowerHex(text, prefix.length)) return index;
  }
  return -1;
};

// The shortest packable string: anything shorter is left alone without looking at it.
const SHORTEST = Math.min(...PREFIXES.map((prefix) => prefix.length)) + HEX_LENGTH;

/**
 * The packed bytes of recent digests. Most digests a step writes repeat across steps and agents (a CallSpec's schema
 * and policy digests, a capability set's), so each is converted once; msgpackr copies what `pack` returns into its
 * output, so one buffer serves every record. Bounded: cleared when full.
 */
const packedBytes = new Map<string, Buffer>();
const packedBytesCapacity = 4_096;

addExtension({
  Class: PackedDigest,
  type: PACKED_DIGEST_EXTENSION,
  pack: (digest: PackedDigest): Buffer => {
    const key = digest.prefix === 0 ? digest.hex : `${digest.prefix}${digest.hex}`;
    let bytes = packedBytes.get(key);
    if (bytes === undefined) {
      bytes = Buffer.allocUnsafe(1 + HEX_LENGTH / 2);
      bytes[0] = digest.prefix;
      bytes.write(digest.hex, 1, 'hex');
      if (packedBytes.size >= packedBytesCapacity) packedBytes.clear();
      packedBytes.set(key, bytes);
    }
    return bytes;
  },
  unpack: (bytes: Uint8Array): string => {
    const prefix = PREFIXES[bytes[0]!];
    if (prefix === undefined || bytes.length !== 1 + HEX_LENGTH / 2) throw new Error('malformed packed digest');
    return prefix + Buffer.from(bytes.buffer, bytes.byteOffset + 1, HEX_LENGTH / 2).toString('hex');
  },
});

const setKey = (target: Record<string, unknown>, key: string, value: unknown): void => {
  // A key named `__proto__` must stay an own data property, as it was in the value being copied.
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
};

/**
 * `value` with every packable digest string replaced by its packed form, for the packed row's encoder; the same
 * reference when it holds none (nothing is copied), otherwise a copy of the parts that do (key order kept).
 */
export function packDigests(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.length < SHORTEST) return value;
    const prefix = prefixOf(value);
    return prefix < 0 ? value : new PackedDigest(prefix, value.slice(PREFIXES[prefix]!.length));
  }
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const packed = packDigests(item);
      if (packed !== item && copy === undefined) copy = value.slice(0, index);
      if (copy !== undefined) copy.push(packed);
    }
    return copy ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  const keys = Object.keys(value);
  let copy: Record<string, unknown> | undefined;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    const item = (value as Record<string, unknown>)[key];
    const packed = packDigests(item);
    if (packed !== item && copy === undefined) {
      copy = {};
      for (let before = 0; before < index; before++) setKey(copy, keys[before]!, (value as Record<string, unknown>)[keys[before]!]);
    }
    if (copy !== undefined) setKey(copy, key, packed);
  }
  return copy ?? value;
}

/** The recent digest strings' packed bytes, by the whole string (`packedDigestBytes`). Bounded: cleared when full. */
const packedByString = new Map<string, Buffer>();

/** The packed bytes of a packable digest string (the extension's data), or undefined for any other string. */
export function packedDigestBytes(value: string): Buffer | undefined {
  let bytes = packedByString.get(value);
  if (bytes !== undefined) return bytes;
  const prefix = prefixOf(value);
  if (prefix < 0) return undefined;
  bytes = Buffer.allocUnsafe(1 + HEX_LENGTH / 2);
  bytes[0] = prefix;
  bytes.write(value.slice(PREFIXES[prefix]!.length), 1, 'hex');
  if (packedByString.size >= packedBytesCapacity) packedByString.clear();
  packedByString.set(value, bytes);
  return bytes;
}

/**
 * `packPlain` that writes every packable digest string inside an `ExtensionScope` as a packed digest: the bytes
 * msgpackr writes for `packDigests` of the scope's value, without copying the value or leaving plain data for
 * msgpackr's slower writer (a packed row holds `PackedDigest`s, which `packPlain` leaves to msgpackr). Undefined for
 * what is not plain data; the caller then packs `packDigests` of it with msgpackr.
 */
export const packPlainDigests: (value: unknown, headerLength: number) => Buffer | undefined = createPlainWriter({
  type: PACKED_DIGEST_EXTENSION,
  minLength: SHORTEST,
  dataOf: packedDigestBytes,
});
