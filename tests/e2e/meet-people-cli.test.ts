import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * The CLI side of issue 29 and of the plan (issue 32 §4), as a user runs it: a typed final answer, a patch and a plan
 * from a scripted model, the project instructions in `rein context` and `rein sandbox`.
 */
describe('typed answers, apply_patch, the plan and project instructions at the command line', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let configHome: { path: string; remove: () => Promise<void> };
  const run = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { REIN_CONFIG_HOME: configHome.path } });
  beforeEach(async () => {
    workspace = await makeTempDir('rein-cli-29-');
    configHome = await makeTempDir('rein-cli-29-config-');
    await writeFile(join(workspace.path, 'sum.js'), 'export const sum = (a, b) => a - b;\n');
    await writeFile(join(workspace.path, 'AGENTS.md'), '# Rules\nRun node --test before you answer.\n');
  });
  afterEach(async () => {
    await workspace.remove();
    await configHome.remove();
  });

  it('rein run --output-schema: a refused answer goes back to the model; the valid one is session.ended.output; a plan and a patch on the way', async () => {
    await writeFile(join(workspace.path, 'schema.json'), JSON.stringify({ type: 'object', properties: { fixed: { type: 'boolean' }, files: { type: 'array', items: { type: 'string' } } }, required: ['fixed', 'files'], additionalProperties: false }));
    const patch = '*** Begin Patch\n*** Update File: sum.js\n@@\n-export const sum = (a, b) => a - b;\n+export const sum = (a, b) => a + b;\n*** End Patch';
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({
      turns: [
        { text: 'Planning.', toolCalls: [{ name: 'update_plan', arguments: { plan: [{ step: 'read sum.js', status: 'in_progress' }, { step: 'fix it', status: 'pending' }] } }, { name: 'read', arguments: { path: 'sum.js' } }] },
        { text: 'Fixing.', toolCalls: [{ name: 'apply_patch', arguments: { input: patch } }, { name: 'update_plan', arguments: { plan: [{ step: 'read sum.js', status: 'completed' }, { step: 'fix it', status: 'completed' }] } }] },
        { text: 'It is fixed.' },
        { text: '{"fixed": true, "files": ["sum.js"]}' },
      ],
    }));
    const result = await run(['run', 'fix sum', '--script', 'script.json', '--output-schema', 'schema.json', '--mode', 'accept-edits', '--json']);
    expect(result.code).toBe(0);
    const records = jsonLines(result.stdout);
    expect(entriesOfRows(records).find((record) => record.type === 'session.ended')?.data).toEqual({ status: 'completed', output: { fixed: true, files: ['sum.js'] } });
    expect(records.filter((record) => record.type === 'model.responded').map((record) => record.data.output?.ok)).toEqual([undefined, undefined, false, true]);
    expect(await readFile(join(workspace.path, 'sum.js'), 'utf8')).toBe('export const sum = (a, b) => a + b;\n');
    const sessionId = String(records[0]!.stream);

    const shown = await run(['show', sessionId]);
    expect(shown.stdout).toContain('plan (0 of 2 done): [>] read sum.js · [ ] fix it');
    expect(shown.stdout).toContain('plan (2 of 2 done): [x] read sum.js · [x] fix it');
    expect(shown.stdout).toContain('apply_patch(patch sum.js)');
    expect(shown.stdout).toContain('session ended: completed; output: {"fixed":true,"files":["sum.js"]}');
    const trace = await run(['trace', sessionId]);
    expect(trace.stdout).toContain('output: {"fixed":true,"files":["sum.js"]}');
    expect(trace.stdout).toContain('plan (2 of 2 done)');

    // The instructions were a part of every model input, with their tokens, and recorded once (unchanged after).
    const context = await run(['context', sessionId, '--turn', '1']);
    expect(context.stdout).toContain('Run node --test before you answer.');
    expect(context.stdout).toMatch(/\+ project_instructions artifact:\/\/blake3\/[0-9a-f]{64} · full · trusted · \d+ tokens — AGENTS\.md/);
    expect(records.filter((record) => record.type === 'instructions.loaded')).toHaveLength(1);
  });

  it('an answer that never validates fails the session with OUTPUT_INVALID; a bad schema file is refused before anything runs', async () => {
    await writeFile(join(workspace.path, 'schema.json'), JSON.stringify({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'no' }, { text: '{}' }, { text: '{"n":"x"}' }, { text: '{"n":1.5}' }] }));
    const failed = await run(['run', 'count', '--script', 'script.json', '--output-schema', 'schema.json']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/OUTPUT_INVALID: the final answer did not validate against the output schema after 3 correction\(s\): n: /);
    await writeFile(join(workspace.path, 'bad.json'), '{ not json');
    const bad = await run(['run', 'count', '--script', 'script.json', '--output-schema', 'bad.json']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('rein: OUTPUT_SCHEMA_INVALID: --output-schema bad.json is not valid JSON');
    expect((await run(['sessions', '--json'])).stdout.trim().split('\n')).toHaveLength(1);
  });

  it('rein sandbox lists the project instruction files with the other protected paths', async () => {
    const report = jsonLines((await run(['sandbox', '--json'])).stdout)[0]!;
    const paths = (report.protected as Array<{ path: string; state: string }>).map((entry) => entry.path);
    expect(paths).toContain(join(workspace.path, 'AGENTS.md'));
    expect(paths).toContain(join(workspace.path, 'CLAUDE.md'));
  });
});
