import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const read = (relative: string) => readFile(fileURLToPath(new URL(relative, import.meta.url)), 'utf8');

describe('README examples', () => {
  it('shows the rein/testing example test verbatim', async () => {
    const [readme, example] = await Promise.all([read('../../README.md'), read('./readme-example.test.ts')]);
    expect(readme).toContain(example.trim());
  });
});
