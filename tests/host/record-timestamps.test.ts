import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runScriptedSession } from 'rein/testing';
import { makeTempDir } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-timestamps-');
  await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
  await writeFile(join(workspace.path, 'b.txt'), 'beta\n');
});
afterEach(() => workspace.remove());

describe('record timestamps', () => {
  it('never go backwards within a stream: parallel tools settle out of order and the wall clock steps back', async () => {
    // Every fifth reading of the clock jumps 100 ms back, as a wall clock corrected by NTP would.
    let calls = 0;
    const clock = () => 1_000_000 + ++calls * 10 - (calls % 5 === 0 ? 100 : 0);
    const reads = ['a.txt', 'b.txt', 'a.txt', 'b.txt'].map((path) => ({ name: 'read', arguments: { path } }));
    const run = await runScriptedSession({ workspace: workspace.path, clock, script: { turns: [{ text: 'Reading.', toolCalls: reads }, { text: 'Listing.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }, { name: 'glob', arguments: { pattern: '*.txt' } }] }, { text: 'Done.' }] } });
    expect(run.result.status).toBe('completed');
    const backwards = run.records.filter((record, index) => index > 0 && record.at < run.records[index - 1]!.at);
    expect(backwards).toEqual([]);
  });
});
