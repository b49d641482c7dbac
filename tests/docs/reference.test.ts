import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordTypes } from '../../models/records.js';
import { renderReference } from '../../scripts/docs/reference.js';
import { errorCodeFamilies } from '../../src/error-codes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('the generated reference (docs/reference)', () => {
  let pages: Record<string, string>;
  beforeAll(async () => {
    pages = await renderReference(root);
  });

  it('is checked in exactly as the code generates it now (run `npm run docs` after changing a record or an error code)', async () => {
    for (const [path, text] of Object.entries(pages)) {
      const stored = await readFile(`${root}${path}`, 'utf8').catch(() => '');
      expect(stored === text, `${path} is stale: run npm run docs`).toBe(true);
    }
  });

  it('has a section for every record type, with its class and fields', () => {
    const page = pages['docs/reference/records.md']!;
    for (const type of Object.keys(recordTypes)) expect(page).toContain(`## \`${type}\`\n`);
    expect(page).toMatch(/## `tool\.settled`\n\nThe terminal result[^\n]*\n\nClass: input[^\n]*\n\n- `effectId`: `string`/);
  });

  it('lists every error code of every family with its meaning', () => {
    const page = pages['docs/reference/errors.md']!;
    const codes = errorCodeFamilies.flatMap((family) => Object.entries(family.codes));
    expect(codes.length).toBeGreaterThan(90);
    for (const [code, meaning] of codes) {
      expect(meaning.trim()).not.toBe('');
      expect(page).toContain(`- \`${code}\`: ${meaning}`);
    }
    expect(page).toContain('(raised as `ConcurrencyConflictError`)');
  });
});
