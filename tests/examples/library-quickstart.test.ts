import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const example = fileURLToPath(new URL('../../dist/scripts/examples/library-quickstart.js', import.meta.url));
const readme = fileURLToPath(new URL('../../README.md', import.meta.url));

describe('the README library example', () => {
  it('runs and completes', async () => {
    const { stdout } = await run(process.execPath, [example]);
    expect(stdout.trim().split('\n').at(-1)).toBe('completed');
    expect(stdout).toContain('session.ended');
  });

  it('is the code the README shows', async () => {
    const text = await readFile(readme, 'utf8');
    for (const line of ['const session = await rein.createSession({ task: \'say hello\' });', 'await session.send(\'say hello\');', 'await rein.replaySession(session.id);']) {
      expect(text).toContain(line);
    }
  });
});
