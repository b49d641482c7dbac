import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const read = (relative: string) => readFile(fileURLToPath(new URL(relative, import.meta.url)), 'utf8');

describe('the testing examples the docs show are the tests that run', () => {
  it("the README's tour shows readme-example.test.ts verbatim", async () => {
    const [readme, example] = await Promise.all([read('../../README.md'), read('./readme-example.test.ts')]);
    expect(readme).toContain(example.trim());
  });

  it('docs/library.md shows library-example.test.ts verbatim', async () => {
    const [page, example] = await Promise.all([read('../../docs/library.md'), read('./library-example.test.ts')]);
    expect(page).toContain(example.trim());
  });
});
