import type { RecordEnvelope } from '../models/envelope.js';
import { CHAIN_FIELD_BYTES, ChainKey, LINK_BYTES, MAC_BYTES, recordDigest } from './chain-crypto.js';
import { envelopeDigest } from './chain-canon.js';

/*
 * The chain (DESIGN §3, docs/architecture.md: *The chain*). Every record a store appends gets a chain field of 12 bytes:
 *
 *     digest(n) = BLAKE3-256("rein/chain/1\0" ‖ kind ‖ predecessor ‖ canonical bytes of record n)
 *     field(n)  = digest(n)[0..4) ‖ keyed-BLAKE3(key, "rein/chain-mac/1\0" ‖ digest(n))[0..8)
 *
 * where the predecessor is nothing for seq 1, record n-1's field when it has one, and record n-1's full digest when
 * it was written before the chain (so the first chained record of an upgraded stream covers every record before it,
 * with the same keyless recursion). The link (first 4 bytes) is checkable without the key; the MAC chains through the
 * predecessor's field, so one valid MAC vouches for every record up to it. The store computes fields itself on
 * append: a caller cannot pass one.
 */

/** The predecessor of seq 1. */
export const CHAIN_ORIGIN: Uint8Array = new Uint8Array(0);

/** A record's chain field under `key`, given its predecessor (see above) and its digest. */
export function chainField(key: ChainKey, digest: Uint8Array): Uint8Array {
  const field = new Uint8Array(CHAIN_FIELD_BYTES);
  // Byte by byte, and the MAC written in place: a view per part cost more than the copies (one field per record).
  for (let index = 0; index < LINK_BYTES; index++) field[index] = digest[index]!;
  key.macInto(digest, field, LINK_BYTES);
  return field;
}

/**
 * The chain fields of consecutive records appended after `predecessor`, their canonical bytes given (or computed),
 * and the predecessor the next append starts from (the last field).
 */
export function chainFields(key: ChainKey, predecessor: Uint8Array, records: readonly RecordEnvelope[], canonicals?: readonly Uint8Array[]): { fields: Uint8Array[]; next: Uint8Array } {
  const fields: Uint8Array[] = new Array(records.length);
  let previous = predecessor;
  for (let index = 0; index < records.length; index++) {
    const canonical = canonicals?.[index];
    previous = chainField(key, canonical === undefined ? envelopeDigest(previous, records[index]!) : recordDigest(previous, canonical));
    fields[index] = previous;
  }
  return { fields, next: previous };
}

/**
 * What one record passes on to its successor: its field when it has one, else (written before the chain) its full
 * digest from its own predecessor. Keyless: an upgrade and a verification walk a stream's unchained records alike.
 */
export function successorOf(predecessor: Uint8Array, record: RecordEnvelope, field: Uint8Array | undefined): Uint8Array {
  return field ?? envelopeDigest(predecessor, record);
}

/** The predecessor the next append to a stream starts from, walking its records (with their fields) from seq 1. */
export async function walkPredecessor(pages: AsyncIterable<ReadonlyArray<{ record: RecordEnvelope; field: Uint8Array | undefined }>>): Promise<Uint8Array> {
  let predecessor = CHAIN_ORIGIN;
  for await (const page of pages) for (const { record, field } of page) predecessor = successorOf(predecessor, record, field);
  return predecessor;
}

/** `u64` big-endian bytes of a seq (in seals and snapshot tags). */
export const seqBytes = (seq: number): Uint8Array => writeSeq(Buffer.alloc(8), seq);

/** Writes `seqBytes(seq)` into `bytes` (8 bytes) and returns it. */
const writeSeq = (bytes: Buffer, seq: number): Buffer => {
  // Two 32-bit halves for a seq (a safe integer ≥ 0): the same bytes as `writeBigUInt64BE`, without a BigInt per seal.
  if (Number.isSafeInteger(seq) && seq >= 0) {
    bytes.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), 0);
    bytes.writeUInt32BE(seq >>> 0, 4);
  } else {
    bytes.writeBigUInt64BE(BigInt(seq));
  }
  return bytes;
};

/** The byte between a stream's name and the head in a seal's input. */
const NAME_END: Uint8Array = Uint8Array.of(0);

/**
 * The seal of a stream at `head`: a MAC (keyed BLAKE3) of the stream's name, the head and the predecessor after the head record.
 * A store records it beside the records (with every append, or at a clean close), so that cutting records off the
 * end, which leaves every remaining MAC valid, is caught: the seal names a head the stream no longer reaches.
 */
export function sealTag(key: ChainKey, stream: string, head: number, predecessor: Uint8Array): Uint8Array {
  // The name's bytes are kept for the last stream sealed (a store seals one stream append after append) and the head
  // is written into a scratch: the tag is computed before either is touched again.
  if (stream !== sealedName) {
    sealedNameBytes = Buffer.from(stream, 'utf8');
    sealedName = stream;
  }
  return key.tag('seal', [sealedNameBytes, NAME_END, writeSeq(sealHead, head), predecessor]);
}

let sealedName = '';
let sealedNameBytes: Uint8Array = new Uint8Array(0);
const sealHead = Buffer.alloc(8);

/** A stream's seal as a store records it: the head it vouches for and its tag. */
export interface StreamSeal {
  head: number;
  tag: Uint8Array;
}

/** The stored chain field of a record, checked for its length; undefined for none (a record written before the chain). */
export function fieldOf(value: unknown): Uint8Array | undefined {
  return value instanceof Uint8Array && value.length === CHAIN_FIELD_BYTES ? value : undefined;
}

export { CHAIN_FIELD_BYTES, LINK_BYTES, MAC_BYTES };
