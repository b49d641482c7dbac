import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRein, createScriptedProvider, openLevelEventStore, parseScript, verifyRecords } from '../../src/index.js';
import type { ModelRequest } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { lineTag } from '../../src/tools/line-tags.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** The scripted model, recording every request so the test can read what the model was shown. */
const recording = (script: unknown): { provider: ModelProvider; requests: ModelRequest[] } => {
  const inner = createScriptedProvider(parseScript(script));
  const requests: ModelRequest[] = [];
  return { requests, provider: { ...inner, stream: (request) => (requests.push(structuredClone({ ...request, signal: undefined })), inner.stream(request)) } };
};

describe('the local tool bundle in a scripted session', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    dir = await makeTempDir('rein-bundle-');
    await mkdir(join(dir.path, 'src'));
    await mkdir(join(dir.path, 'test'));
    await writeFile(join(dir.path, 'src', 'stats.js'), 'export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / (xs.length - 1);\nexport const max = (xs) => Math.min(...xs);\n');
    await writeFile(join(dir.path, 'test', 'stats.test.js'), "import { mean, max } from '../src/stats.js';\nif (mean([1, 2, 3]) !== 2) throw new Error('mean');\nif (max([1, 5, 3]) !== 5) throw new Error('max');\nconsole.log('ok');\n");
  });
  afterAll(() => dir.remove());

  it('reads, hash-edits, exact-edits, greps, globs and runs bash; every failure reaches the model as a typed observation', async () => {
    const maxLine = 'export const max = (xs) => Math.min(...xs);';
    const script = {
      turns: [
        { text: 'Find files.', toolCalls: [{ name: 'glob', arguments: { pattern: '**/*.js' } }, { name: 'grep', arguments: { pattern: 'Math\\.min', include: '*.js' } }] },
        { text: 'Run the tests.', toolCalls: [{ name: 'bash', arguments: { command: 'node test/stats.test.js', description: 'run the tests' } }] },
        { text: 'Read.', toolCalls: [{ name: 'read', arguments: { path: 'src/stats.js' } }, { name: 'read', arguments: { path: 'src/missing.js' } }] },
        { text: 'Fix max by tag.', toolCalls: [{ name: 'edit_lines', arguments: { path: 'src/stats.js', ops: [{ op: 'replace_line', tag: lineTag(2, maxLine), new_text: 'export const max = (xs) => Math.max(...xs);' }] } }] },
        { text: 'Fix mean exactly.', toolCalls: [{ name: 'edit', arguments: { path: 'src/stats.js', old_string: 'xs.length - 1', new_string: 'xs.length' } }, { name: 'edit', arguments: { path: 'src/stats.js', old_string: 'nope' } }] },
        { text: 'Mistakes.', toolCalls: [{ name: 'read', arguments: { path: '../etc/passwd' } }, { name: 'bash', arguments: { command: 'sleep 5', timeout_ms: 200 } }, { name: 'fly', arguments: {} }] },
        { text: 'Test again.', toolCalls: [{ name: 'bash', arguments: { command: 'node test/stats.test.js' } }] },
        { text: 'Fixed mean and max.' },
      ],
    };
    const store = await openLevelEventStore(join(dir.path, '.rein'));
    const { provider, requests } = recording(script);
    const rein = await createRein({ store, workspace: dir.path, provider, permissions: { mode: 'accept-edits', rules: ['allow bash:node test/*', 'allow bash:sleep *'] }, sandbox: { loginShell: false, killGraceMs: 200 } });
    const session = await rein.startSession({ task: 'Fix the failing tests.' });
    const result = await session.whenQuiet();
    expect(result.status).toBe('completed');
    expect(await readFile(join(dir.path, 'src', 'stats.js'), 'utf8')).toBe('export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / (xs.length);\nexport const max = (xs) => Math.max(...xs);\n');

    // Each observation must reach the model in some request (the context policy keeps a recent tail, not everything).
    const seen = new Map<string, (typeof requests)[number]['messages'][number]>();
    for (const request of requests) for (const message of request.messages) if (message.role === 'tool' && !seen.has(message.callId)) seen.set(message.callId, message);
    const toolMessages = [...seen.values()];
    // The context quotes tool output as untrusted data: `<tool-output … trust="untrusted">\n<observation>\n</tool-output>`.
    const observationOf = (content: string): string => {
      expect(content).toMatch(/^<tool-output [^>]*trust="untrusted">\n[\s\S]*\n<\/tool-output>$/);
      return content.slice(content.indexOf('>\n') + 2, content.lastIndexOf('\n</tool-output>'));
    };
    const byName = (name: string) => toolMessages.filter((message) => message.role === 'tool' && message.name === name).map((message) => observationOf((message as { content: string }).content));
    expect(JSON.parse(byName('glob')[0]!)).toEqual(['src/stats.js', 'test/stats.test.js']);
    expect(JSON.parse(byName('grep')[0]!)).toEqual([{ file: 'src/stats.js', line: 2, text: maxLine }]);
    expect(JSON.parse(byName('bash')[0]!)).toMatchObject({ exit_code: 1, success: false });
    expect(byName('read')[1]).toMatch(/^NotFound: /);
    expect(byName('edit_lines')[0]).toContain('Math.max');
    expect(byName('edit')[1]).toMatch(/^InvalidInput: edit: new_string: .*Received path \(string, 12 chars/);
    expect(byName('read')[2]).toMatch(/^Denied: /);
    expect(byName('bash')[1]).toMatch(/^Timeout: .*"timed_out":true/);
    expect(byName('fly')[0]).toMatch(/^InvalidInput: unknown tool "fly"/);
    expect(JSON.parse(byName('bash')[2]!)).toMatchObject({ exit_code: 0, success: true, stdout: 'ok\n' });
    expect(toolMessages.every((message) => message.role === 'tool' && typeof message.callId === 'string')).toBe(true);

    const records = await store.read(session.id);
    expect(verifyRecords(session.id, records).regenerated).toBeGreaterThan(0);
    for (const type of ['tool.validated', 'permission.decided', 'tool.started', 'file.read', 'file.written', 'tool.rejected']) expect(flattenRecords(records).some((record) => record.type === type)).toBe(true);
    await store.close();
  });
});
