import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { decodeValue, encodeValue } from '../../stores/record-codec.js';
import { decodeRecord, encodeRecord } from '../../stores/record-drafts.js';
import { decodeStoredValue, encodeGroups, withChainFields } from '../../stores/record-groups.js';
import { ChainKey } from '../../stores/chain-crypto.js';
import { CHAIN_ORIGIN, chainFields } from '../../stores/chain.js';

const fixture = (name: string) => readFile(fileURLToPath(new URL(`../fixtures/codec/${name}`, import.meta.url)), 'utf8');

/**
 * Logs are forever: the bytes a record was stored as (committed, one file per layout) must still decode to the same
 * value, and today's encoder must still produce exactly those bytes. A change to the pinned codec options or to a
 * record layout without a new codec id fails here, not in someone's old session.
 */
describe('the stored record format', () => {
  it('decodes the committed v1 bytes to the committed value', async () => {
    const [hex, json] = await Promise.all([fixture('record-v1.hex'), fixture('record-v1.json')]);
    expect(decodeValue(Buffer.from(hex.trim(), 'hex'), { stream: 'fixture', seq: 6 })).toEqual(JSON.parse(json));
    // A `/1` stream's records read through the record decoder too.
    const record = JSON.parse(json) as RecordEnvelope;
    expect(decodeRecord(Buffer.from(hex.trim(), 'hex'), record.stream, record.seq)).toEqual(record);
  });

  it('encodes the committed value to exactly the committed v1 bytes', async () => {
    const [hex, json] = await Promise.all([fixture('record-v1.hex'), fixture('record-v1.json')]);
    expect(Buffer.from(encodeValue(JSON.parse(json))).toString('hex')).toBe(hex.trim());
    expect(Buffer.from(encodeRecord(JSON.parse(json) as RecordEnvelope, 'envelope')).toString('hex')).toBe(hex.trim());
  });

  it('decodes the committed compact (v2) bytes to the committed record, its stream taken from where it is read', async () => {
    const [hex, json] = await Promise.all([fixture('record-v2.hex'), fixture('record-v1.json')]);
    const record = JSON.parse(json) as RecordEnvelope;
    const decoded = decodeRecord(Buffer.from(hex.trim(), 'hex'), record.stream, record.seq);
    expect(decoded).toEqual(record);
    expect(Object.keys(decoded)).toEqual(Object.keys(record));
  });

  it('encodes the committed record to exactly the committed compact (v2) bytes', async () => {
    const [hex, json] = await Promise.all([fixture('record-v2.hex'), fixture('record-v1.json')]);
    expect(Buffer.from(encodeRecord(JSON.parse(json) as RecordEnvelope, 'compact')).toString('hex')).toBe(hex.trim());
  });

  it('decodes the committed packed (v3) bytes to the committed record, digests back as the same strings', async () => {
    const [hex, json] = await Promise.all([fixture('record-v3.hex'), fixture('record-v3.json')]);
    const record = JSON.parse(json) as RecordEnvelope;
    const decoded = decodeRecord(Buffer.from(hex.trim(), 'hex'), record.stream, record.seq);
    expect(decoded).toEqual(record);
    expect(Object.keys(decoded)).toEqual(Object.keys(record));
    expect(Object.keys(decoded.data as object)).toEqual(Object.keys(record.data as object));
  });

  it('encodes the committed record to exactly the committed packed (v3) bytes, each digest as its 32 bytes', async () => {
    const [hex, json] = await Promise.all([fixture('record-v3.hex'), fixture('record-v3.json')]);
    const record = JSON.parse(json) as RecordEnvelope;
    expect(Buffer.from(encodeRecord(record)).toString('hex')).toBe(hex.trim());
    // A digest string (2 header bytes, prefix, 64 hex) becomes a 36-byte extension (3 header bytes, prefix code, 32
    // bytes): two `b3:` digests save 33 bytes each, the artifact ref 48 and the `sha256:` digest 37.
    expect(encodeRecord(record, 'compact').length - encodeRecord(record).length).toBe(33 + 33 + 48 + 37);
  });

  it('decodes the committed chained group (v4) to its records and chain fields, and chains and encodes them to exactly those bytes', async () => {
    // The chain's derivation is pinned too: the same records under the same key give the same fields, forever.
    const [hex, json] = await Promise.all([fixture('group-v4.hex'), fixture('group-v4.json')]);
    const pinned = JSON.parse(json) as { key: string; records: RecordEnvelope[]; fields: string[] };
    const stored = Buffer.from(hex.trim(), 'hex');
    const decoded = decodeStoredValue(stored, pinned.records[0]!.stream, pinned.records.at(-1)!.seq);
    expect(decoded.map((entry) => entry.record)).toEqual(pinned.records);
    expect(decoded.map((entry) => Buffer.from(entry.field!).toString('hex'))).toEqual(pinned.fields);
    const key = await ChainKey.create(Buffer.from(pinned.key, 'hex'));
    const { fields } = chainFields(key, CHAIN_ORIGIN, pinned.records);
    expect(fields.map((field) => Buffer.from(field).toString('hex'))).toEqual(pinned.fields);
    const [group] = await encodeGroups(pinned.records);
    expect(Buffer.from(withChainFields(group!, fields).value).toString('hex')).toBe(hex.trim());
  });
});
