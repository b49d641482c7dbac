import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from '../../stores/record-codec.js';

const fixture = (name: string) => readFile(fileURLToPath(new URL(`../fixtures/codec/${name}`, import.meta.url)), 'utf8');

/**
 * Logs are forever: the bytes a record was stored as in version 1 (committed) must still decode to the same value,
 * and today's encoder must still produce exactly those bytes. A change to the pinned codec options without a
 * migration fails here, not in someone's old session.
 */
describe('the stored record format', () => {
  it('decodes the committed v1 bytes to the committed value', async () => {
    const [hex, json] = await Promise.all([fixture('record-v1.hex'), fixture('record-v1.json')]);
    expect(decodeValue(Buffer.from(hex.trim(), 'hex'), { stream: 'fixture', seq: 6 })).toEqual(JSON.parse(json));
  });

  it('encodes the committed value to exactly the committed v1 bytes', async () => {
    const [hex, json] = await Promise.all([fixture('record-v1.hex'), fixture('record-v1.json')]);
    expect(Buffer.from(encodeValue(JSON.parse(json))).toString('hex')).toBe(hex.trim());
  });
});
