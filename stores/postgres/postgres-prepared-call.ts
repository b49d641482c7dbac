import type { Connection, Pool, Submittable } from 'pg';
import { utf8 } from './postgres-binary-arrays.js';

/*
 * One execution of a named prepared statement, written by the store itself: node-postgres's `Query` serializes each
 * parameter through `prepareValue` and its message writer (five or six function calls per parameter, each a few more
 * inside Node's Buffer), describes the portal on every execution, and builds a `Result` with a type parser per
 * column. The append sends 21 parameters and needs one number back, 23 times per worker session. Here the whole
 * request (Parse on a connection's first use, then Bind, Execute, Sync) is one buffer and one socket write, and the
 * answer is the first column of the first row as text. node-postgres still owns the connection: it queues this call
 * like any query (`Submittable`), dispatches the server's messages to it, records the statement as parsed on
 * ParseComplete, and fails it on a connection error.
 */

/** A parameter: `null` is SQL NULL; bytes (a `Uint8Array`, `Buffer` included) go in binary format (the server's receive function for its type); the rest as text. */
export type CallValue = string | number | boolean | null | Uint8Array;

/** What node-postgres keeps on a connection about named statements (untyped in @types/pg). */
interface StatementBook {
  parsedStatements: Record<string, string>;
  submittedNamedStatements?: Record<string, string>;
}

const EXECUTE_SYNC = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4]);

/**
 * Runs `name` (parsed from `text` on each connection once) with `values` and resolves with the first column of the
 * first row, as text (`null` when NULL or no row). Pass it to `pool.query` / `client.query` like a query config.
 */
export class PreparedCall implements Submittable {
  readonly name: string;
  readonly text: string;
  readonly #values: readonly CallValue[];
  /** Set by node-postgres (`client.query(call, callback)` / `pool.query`). */
  callback: ((error: Error | null, value?: string | null) => void) | undefined;
  #first: string | null = null;
  #done = false;

  constructor(name: string, text: string, values: readonly CallValue[]) {
    this.name = name;
    this.text = text;
    this.#values = values;
  }

  submit(connection: Connection): Error | null {
    // As node-postgres does not write to a socket that ended; the message marks it a connection error (retried).
    if (!connection.stream.writable) return new Error('Connection terminated: the socket is no longer writable');
    const book = connection as unknown as StatementBook;
    const known = book.parsedStatements[this.name] ?? book.submittedNamedStatements?.[this.name];
    if (known !== undefined && known !== this.text) return new Error(`prepared statement ${this.name} already holds another text`);
    const parse = known === undefined;
    if (parse && book.submittedNamedStatements !== undefined) book.submittedNamedStatements[this.name] = this.text;
    connection.stream.write(request(parse ? this.text : undefined, this.name, this.#values));
    return null;
  }

  handleRowDescription(): void {}

  handleDataRow(message: { fields: Array<string | null> }): void {
    if (this.#first === null && message.fields.length > 0) this.#first = message.fields[0] ?? null;
  }

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: Connection): void {
    // Never asked for; answer as node-postgres does for a query that is not a COPY, so the connection stays usable.
    (connection as unknown as { sendCopyFail(message: string): void }).sendCopyFail('No source stream defined');
  }

  handleCopyData(): void {}

  handleError(error: Error): void {
    this.#finish(error);
  }

  handleReadyForQuery(): void {
    this.#finish(null);
  }

  #finish(error: Error | null): void {
    if (this.#done) return;
    this.#done = true;
    if (error === null) this.callback?.(null, this.#first);
    else this.callback?.(error);
  }
}

/** Parse (when `text` is given), Bind, Execute and Sync of the unnamed portal over statement `name`, in one buffer. */
const request = (text: string | undefined, name: string, values: readonly CallValue[]): Buffer => {
  const count = values.length;
  let bound = 1 + 4 + 1 + (3 * name.length + 1) + 2 + 2 * count + 2 + 4 + EXECUTE_SYNC.length;
  if (text !== undefined) bound += 1 + 4 + (3 * name.length + 1) + (3 * text.length + 1) + 2;
  const texts: Array<string | undefined> = new Array(count);
  for (let index = 0; index < count; index++) {
    const value = values[index];
    if (value === null || value === undefined) bound += 4;
    else if (value instanceof Uint8Array) bound += 4 + value.byteLength;
    else {
      const written = typeof value === 'string' ? value : String(value);
      texts[index] = written;
      bound += 4 + 3 * written.length;
    }
  }
  const buffer = Buffer.allocUnsafe(bound);
  const view = new DataView(buffer.buffer, buffer.byteOffset, bound);
  let at = 0;
  if (text !== undefined) {
    buffer[at] = 0x50; // 'P'
    const start = at + 1;
    at = cString(buffer, cString(buffer, start + 4, name), text);
    view.setInt16(at, 0);
    at += 2;
    view.setInt32(start, at - start);
  }
  buffer[at] = 0x42; // 'B'
  const start = at + 1;
  buffer[start + 4] = 0; // the unnamed portal
  at = cString(buffer, start + 5, name);
  view.setInt16(at, count);
  at += 2;
  for (let index = 0; index < count; index++) {
    view.setInt16(at, values[index] instanceof Uint8Array ? 1 : 0);
    at += 2;
  }
  view.setInt16(at, count);
  at += 2;
  for (let index = 0; index < count; index++) {
    const value = values[index];
    if (value === null || value === undefined) {
      view.setInt32(at, -1);
      at += 4;
    } else if (value instanceof Uint8Array) {
      view.setInt32(at, value.byteLength);
      buffer.set(value, at + 4);
      at += 4 + value.byteLength;
    } else {
      const length = utf8(buffer, at + 4, texts[index]!);
      view.setInt32(at, length);
      at += 4 + length;
    }
  }
  view.setInt16(at, 1); // one result format code for all columns: text
  view.setInt16(at + 2, 0);
  at += 4;
  view.setInt32(start, at - start);
  buffer.set(EXECUTE_SYNC, at);
  return buffer.subarray(0, at + EXECUTE_SYNC.length);
};

/** Writes `value` and its NUL at `at`; the offset after it. */
const cString = (buffer: Buffer, at: number, value: string): number => {
  const length = utf8(buffer, at, value);
  buffer[at + length] = 0;
  return at + length + 1;
};


/** Runs `call` on a connection of `pool` (node-postgres types a `Submittable` query as returning itself; the pool returns a promise). */
export const runPreparedCall = (pool: Pool, call: PreparedCall): Promise<string | null> =>
  (pool as unknown as { query(call: PreparedCall): Promise<string | null> }).query(call);
