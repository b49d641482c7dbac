/*
 * The append's array parameters in PostgreSQL's binary format (what `array_recv` reads), written straight into one
 * buffer per append. node-postgres sends a `Buffer` parameter as binary and anything else as text; a JS array would be
 * turned into an array literal element by element (`prepareValue`, two regex escapes per text element, every bytea
 * element hex-encoded into the literal and hex-decoded again by the server). Here each array is one pass over its
 * elements; the values the server stores are the same, and an append's message is ~40% smaller.
 *
 * Layout of a one-dimensional array: ndim (int32, 1), has-nulls flag (int32), element type OID (int32), length
 * (int32), lower bound (int32, 1), then each element as its byte length (int32, -1 for NULL) and its bytes. An empty
 * array is ndim 0, the flag and the OID only. All integers are big-endian.
 */

/** Element type OIDs of the arrays the append sends. */
export const ELEMENT_OID = { bytea: 17, int8: 20, int4: 23, text: 25, float8: 701 } as const;

const HEADER = 20;
/** Bytes per chunk at least: one append's arrays (two records of a few hundred bytes, their chain fields) fit in one. */
const CHUNK = 4000;
const TWO_32 = 4294967296;

/**
 * Writes binary array parameters into shared chunks: each array is one contiguous `Uint8Array` view (binary to
 * node-postgres and to PreparedCall alike). A writer serves one
 * append (its views must stay untouched until the query is sent, retries included), so it is never reused.
 */
export class BinaryArrays {
  #chunk: Buffer = Buffer.alloc(0);
  #view = new DataView(this.#chunk.buffer, 0, 0);
  #offset = 0;

  /** A `text[]` (NULL for `null`/`undefined` elements). */
  texts(values: readonly (string | null | undefined)[]): Uint8Array {
    let bound = HEADER;
    for (let index = 0; index < values.length; index++) bound += 4 + 3 * (values[index]?.length ?? 0);
    let at = this.#start(ELEMENT_OID.text, values, bound);
    const chunk = this.#chunk;
    const view = this.#view;
    for (let index = 0; index < values.length; index++) {
      const value = values[index];
      if (value === null || value === undefined) {
        view.setInt32(at, -1);
        at += 4;
        continue;
      }
      const length = utf8(chunk, at + 4, value);
      view.setInt32(at, length);
      at += 4 + length;
    }
    return this.#end(at);
  }

  /** An `integer[]` (int4). */
  int4s(values: readonly number[]): Uint8Array {
    let at = this.#start(ELEMENT_OID.int4, values, HEADER + 8 * values.length);
    const view = this.#view;
    for (let index = 0; index < values.length; index++) {
      view.setInt32(at, 4);
      view.setInt32(at + 4, values[index]!);
      at += 8;
    }
    return this.#end(at);
  }

  /** A `bigint[]` (int8) of safe integers. */
  int8s(values: readonly number[]): Uint8Array {
    let at = this.#start(ELEMENT_OID.int8, values, HEADER + 12 * values.length);
    const view = this.#view;
    for (let index = 0; index < values.length; index++) {
      const value = values[index]!;
      const high = Math.floor(value / TWO_32);
      view.setInt32(at, 8);
      view.setInt32(at + 4, high);
      view.setUint32(at + 8, value - high * TWO_32);
      at += 12;
    }
    return this.#end(at);
  }

  /** A `double precision[]` (float8). */
  float8s(values: readonly number[]): Uint8Array {
    let at = this.#start(ELEMENT_OID.float8, values, HEADER + 12 * values.length);
    const view = this.#view;
    for (let index = 0; index < values.length; index++) {
      view.setInt32(at, 8);
      view.setFloat64(at + 4, values[index]!);
      at += 12;
    }
    return this.#end(at);
  }

  /** A `bytea[]`. */
  byteas(values: readonly Uint8Array[]): Uint8Array {
    let bound = HEADER;
    for (let index = 0; index < values.length; index++) bound += 4 + values[index]!.byteLength;
    let at = this.#start(ELEMENT_OID.bytea, values, bound);
    const chunk = this.#chunk;
    const view = this.#view;
    for (let index = 0; index < values.length; index++) {
      const value = values[index]!;
      view.setInt32(at, value.byteLength);
      chunk.set(value, at + 4);
      at += 4 + value.byteLength;
    }
    return this.#end(at);
  }

  /** Room for `bound` bytes, then the header; the offset of the first element. */
  #start(oid: number, values: readonly unknown[], bound: number): number {
    if (this.#chunk.length - this.#offset < bound) {
      // Below 4 KB from Node's shared pool (cheap); bigger chunks get their own memory.
      this.#chunk = Buffer.allocUnsafe(Math.max(bound, CHUNK));
      this.#view = new DataView(this.#chunk.buffer, this.#chunk.byteOffset, this.#chunk.length);
      this.#offset = 0;
    }
    const view = this.#view;
    const at = this.#offset;
    if (values.length === 0) {
      view.setInt32(at, 0);
      view.setInt32(at + 4, 0);
      view.setInt32(at + 8, oid);
      return at + 12;
    }
    let nulls = 0;
    for (let index = 0; index < values.length; index++) if (values[index] === null || values[index] === undefined) nulls = 1;
    view.setInt32(at, 1);
    view.setInt32(at + 4, nulls);
    view.setInt32(at + 8, oid);
    view.setInt32(at + 12, values.length);
    view.setInt32(at + 16, 1);
    return at + HEADER;
  }

  /** The array written since `#start`, as a view (a plain Uint8Array: cheaper to make than a Buffer's subarray). */
  #end(at: number): Uint8Array {
    const view = new Uint8Array(this.#chunk.buffer, this.#chunk.byteOffset + this.#offset, at - this.#offset);
    this.#offset = at;
    return view;
  }
}

/** Writes `value` as UTF-8 at `at` (room for 3 bytes per UTF-16 unit is there); its byte length. */
export const utf8 = (buffer: Buffer, at: number, value: string): number => {
  const length = value.length;
  for (let index = 0; index < length; index++) {
    const code = value.charCodeAt(index);
    if (code >= 0x80) return buffer.write(value, at, 'utf8');
    buffer[at + index] = code;
  }
  return length;
};
