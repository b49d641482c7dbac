import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';

/**
 * The golden log format (rein's own tests/fixtures/logs/*.ndjson): one JSON value per line — a header
 * `{ "fixture": 1, "stream": … }`, then every record of the stream in seq order as `{ "record": <envelope> }`, then
 * every blob the records reference as `{ "blob": "artifact://blake3/…", "base64": … }`. Plain text, so a diff
 * shows what a re-capture changed.
 */
export interface LogFixture {
  stream: string;
  records: RecordEnvelope[];
  blobs: Map<string, Uint8Array>;
}

const artifactRef = /artifact:\/\/blake3\/[0-9a-f]{64}/g;

/** Every `artifact://blake3/…` reference anywhere in a record's data (strings at any depth). */
export const refsIn = (data: unknown): string[] => {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') for (const match of value.matchAll(artifactRef)) found.add(match[0]);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(visit);
  };
  visit(data);
  return [...found];
};

/** Write records (one stream's, in seq order) and their blobs (`ref → base64`) in the golden log format. */
export const formatFixture = (records: readonly RecordEnvelope[], blobs: ReadonlyMap<string, string>): string => {
  const stream = records[0]?.stream ?? '';
  const lines = [JSON.stringify({ fixture: 1, stream }), ...records.map((record) => JSON.stringify({ record })), ...[...blobs].map(([blob, base64]) => JSON.stringify({ blob, base64 }))];
  return `${lines.join('\n')}\n`;
};

/** Parse a golden log; a malformed line is an error naming its line number. */
export const parseFixture = (text: string, source = 'fixture'): LogFixture => {
  const fixture: LogFixture = { stream: '', records: [], blobs: new Map() };
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let value: { fixture?: number; stream?: string; record?: RecordEnvelope; blob?: string; base64?: string };
    try {
      value = JSON.parse(line) as typeof value;
    } catch (error) {
      throw new Error(`${source}:${index + 1}: not JSON (${(error as Error).message})`);
    }
    if (index === 0) {
      if (value.fixture !== 1 || typeof value.stream !== 'string') throw new Error(`${source}:1: not a golden log header`);
      fixture.stream = value.stream;
    } else if (value.record) fixture.records.push(value.record);
    else if (typeof value.blob === 'string' && typeof value.base64 === 'string') fixture.blobs.set(value.blob, Buffer.from(value.base64, 'base64'));
    else throw new Error(`${source}:${index + 1}: neither a record nor a blob`);
  });
  return fixture;
};

/**
 * A stored session (or the memory stream) as a golden log: every record of `stream` and every blob they reference,
 * in the format `parseFixture` / `readLogFixture` read. Write the text to a `.ndjson` file and commit it.
 */
export const writeLogFixture = async (store: EventStore, stream: string): Promise<string> => {
  const records = await store.read(stream);
  const blobs = new Map<string, string>();
  for (const record of records) {
    for (const ref of refsIn(record.data)) {
      if (!blobs.has(ref)) blobs.set(ref, Buffer.from(await store.readBlob(stream, ref)).toString('base64'));
    }
  }
  return formatFixture(records, blobs);
};

/**
 * Read a golden log's text into `store` (the stream must not exist there yet): its records are appended in one
 * batch, with their blobs, through the store's ordinary append path, as they were written. Returns the parsed fixture.
 */
export const readLogFixture = async (store: EventStore, text: string, source?: string): Promise<LogFixture> => {
  const fixture = parseFixture(text, source);
  const drafts = fixture.records.map(({ stream: _stream, seq: _seq, ...draft }) => draft);
  await store.append(fixture.stream, drafts, { expectedSeq: 0, blobs: [...fixture.blobs.values()] });
  return fixture;
};

/**
 * Deterministic record ids for `ReinOptions.newRecordId`: `<seed>-<counter in base 36>`, so two runs with the same
 * seed, script, clock and session id write the same log.
 */
export const sequentialIds = (seed: string | number = 0): (() => string) => {
  let counter = 0;
  return () => `${seed}-${(counter++).toString(36)}`;
};
