import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/** The fourth trial's leftovers, each through the CLI as the trial met it. */
describe('trial 4 leftovers', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path, REIN_CONFIG_HOME: join(workspace.path, '.config-home'), REIN_PROVIDER: '' } });
  const script = (name: string, value: unknown) => writeFile(join(workspace.path, name), JSON.stringify(value));
  beforeEach(async () => {
    workspace = await makeTempDir('rein-trial4-');
    await writeFile(join(workspace.path, 'a.txt'), 'x\n');
  });
  afterEach(() => workspace.remove());

  it('with a full visible set, tool_search makes its top hit visible, and the model can call it next turn (D19)', async () => {
    const grep = { name: 'grep', arguments: { pattern: 'x' } };
    await script('vis.json', { turns: [{ text: 'One.', toolCalls: [grep] }, { text: 'Two.', toolCalls: [{ name: 'tool_search', arguments: { query: 'grep search file contents' } }] }, { text: 'Three.', toolCalls: [grep] }, { text: 'Done.' }] });
    for (const limit of ['2', '3']) {
      const run = await cli(['run', 'vis', '--script', 'vis.json', '--visible-limit', limit, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const records = jsonLines(run.stdout);
      const search = entriesOfRows(records).find((record) => record.type === 'tool.settled' && record.data.name === 'tool_search')!.data as { value: { hits: string[] } };
      expect(search.value.hits[0]).toBe('grep');
      const greps = entriesOfRows(records).filter((record) => record.type === 'tool.settled' && record.data.name === 'grep').map((record) => record.data);
      // Deferred before the search; visible and run after it.
      expect(greps.map((data) => data.status)).toEqual(['error', 'ok']);
      const diffs = entriesOfRows(records).filter((record) => record.type === 'capability.diff').map((record) => record.data as { added: Array<{ name: string; reason: string }>; inputs: { searchHits: string[] } });
      const afterSearch = diffs[diffs.length - 1]!;
      expect(afterSearch.added).toContainEqual(expect.objectContaining({ name: 'grep', reason: 'tool_search' }));
      expect(afterSearch.inputs.searchHits[0]).toBe('grep');
    }
  });

  it('a bad flag value is the usage error, before a missing provider is reported (D14)', async () => {
    for (const [flag, value, message] of [
      ['--max-turns', 'abc', '--max-turns must be a positive integer, got "abc"'],
      ['--max-tool-calls', '0', '--max-tool-calls must be a positive integer, got "0"'],
      ['--visible-limit', 'x', '--visible-limit must be a positive integer, got "x"'],
      ['--mode', 'bogus', '--mode must be default, plan or accept-edits, got "bogus"'],
    ] as const) {
      const run = await cli(['run', 'x', flag, value]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`rein: USAGE: ${message}\n`);
    }
    const none = await cli(['run', 'x']);
    expect(none.stderr).toContain('rein: USAGE: no model provider configured');
  });

  it("a child agent's approval question and answer carry its task id like its other lines (D14)", async () => {
    await script('child.json', {
      turns: [{ text: 'Delegating.', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'w', role: 'worker', objective: 'write b.txt' }] } }] }, { text: 'Done.' }],
      agents: { worker: { turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'beta\n' } }] }, { text: 'Reporting.', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'wrote b.txt', changes: [{ path: 'b.txt', description: 'new file' }], rationale: 'asked to' } }] }] } },
    });
    const run = await cli(['run', 'get b.txt written', '--script', 'child.json']);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/^ {2}\[w\] \? write b\.txt — needs approval: /m);
    const resumed = await cli(['resume', /session (s-[\w-]+):/.exec(run.stdout)![1]!, '--yes']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^ {2}\[w\] → allow-once$/m);
    // The root agent's own approvals stay unprefixed.
    await script('root.json', { turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'c.txt', content: 'c\n' } }] }, { text: 'Done.' }] });
    expect((await cli(['run', 'write c', '--script', 'root.json'])).stdout).toMatch(/^ {2}\? write c\.txt — needs approval: /m);
  });

  it('a project plugin changed since it was trusted says "untrusted (changed)" (D14)', async () => {
    const directory = join(workspace.path, '.rein-plugins', 'quiet');
    await mkdir(directory, { recursive: true });
    const manifest = { id: 'quiet', name: 'Quiet', version: '1.0.0' };
    await writeFile(join(directory, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
    await writeFile(join(directory, 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({}) };\n`);
    const fresh = await cli(['plugins', 'list']);
    expect(fresh.stdout).toContain('PLUGIN_UNTRUSTED at policy: a project plugin runs only after you trust it');
    expect((await cli(['plugins', 'trust', 'quiet'])).code).toBe(0);
    expect((await cli(['plugins', 'list', '--json'])).stdout).toContain('"state":"ready"');
    await writeFile(join(directory, 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({}) }; // changed\n`);
    const changed = await cli(['plugins', 'list']);
    expect(changed.stdout).toContain('PLUGIN_UNTRUSTED at policy: untrusted (changed): its manifest or code changed since you trusted it');
    await script('hello.json', { turns: [{ text: 'Hello.' }] });
    const run = await cli(['run', 'hi', '--script', 'hello.json']);
    expect(run.code, run.stderr).toBe(0);
    expect(`${run.stdout}${run.stderr}`).toContain('untrusted (changed)');
  });
});
