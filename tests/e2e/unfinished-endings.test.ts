import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicReplyChunks, openAIReplyChunks } from '../support/loopback-model.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const clean = { REIN_PROVIDER: '', REIN_MODEL: '', REIN_BASE_URL: '', OPENAI_API_KEY: 'sk-loop', ANTHROPIC_API_KEY: 'sk-loop' };
const idOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;

/** Never "completed" alone: a session that ended over a cut reply or an objecting stop hook says so everywhere (trial5 E4, E6). */
describe('a session whose last reply was cut at the output token limit', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let openai: LoopbackServer;
  let anthropic: LoopbackServer;
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: clean });

  beforeAll(async () => {
    workspace = await makeTempDir('rein-cut-replies-');
    // Every reply is cut (`finish_reason: "length"`), except where the conversation already holds two harness notes.
    openai = await startLoopbackServer((request) => {
      const notes = (request.body.messages as Array<{ role: string; content?: string | null }>).filter((message) => message.role === 'user' && String(message.content ?? '').includes('cut off at the output token limit')).length;
      const finishes = String(request.body.messages[1]?.content ?? '').includes('finish') && notes >= 1;
      return { chunks: openAIReplyChunks(finishes ? { text: ' and the rest.' } : { text: 'truncated answer', finish: 'length' }) };
    });
    anthropic = await startLoopbackServer(() => ({ chunks: anthropicReplyChunks({ text: 'truncated answer', finish: 'max_tokens' }) }));
  });
  afterAll(async () => {
    await openai.close();
    await anthropic.close();
    await workspace.remove();
  });

  it('OpenAI finish_reason "length": the model is asked to continue three times, then the session ends completed with the cut said in the summary, show and trace', async () => {
    const run = await cli(['run', 'hi', '--provider', 'openai', '--base-url', `${openai.url}/v1`, '--model', 'm']);
    expect(run.stderr).toBe('');
    expect(openai.requests).toHaveLength(4);
    // Each continuation reads the cut reply and the harness note that it was cut.
    const second = openai.requests[1]!.body.messages as Array<{ role: string; content?: string }>;
    // In that order, before the volatile turn context that ends every input.
    const cut = second.findIndex((message) => message.role === 'assistant' && message.content === 'truncated answer');
    expect(cut).toBeGreaterThan(0);
    expect(second[cut + 1]!.content).toContain('cut off at the output token limit (max_tokens)');
    expect(second.at(-1)!.content).toMatch(/^<turn-context /);
    expect(run.stdout).toContain('! the reply was cut at the output token limit (max_tokens)');
    expect(run.stdout).toMatch(/completed · outcome unverified \(no passing verification speaks for the result: rein trace says why\) — the last reply was cut at the output token limit \(max_tokens\) after 3 continuation\(s\): the answer is incomplete/);
    const id = idOf(run.stdout);
    const show = await cli(['show', id]);
    expect(show.stdout).toMatch(/assistant: truncated answer \[cut at the output token limit: max_tokens\]/);
    expect(show.stdout).toMatch(/session ended: completed \(the last reply was cut .*\); left open: reply_cut/);
    const ended = entriesOfRows(jsonLines((await cli(['show', id, '--json'])).stdout)).find((record) => record.type === 'session.ended')!;
    expect(ended.data.caveats).toEqual([{ kind: 'reply_cut', detail: expect.stringContaining('max_tokens') }]);
    const trace = await cli(['trace', id]);
    expect(trace.stdout).toContain('outcome: unverified');
    expect(trace.stdout).toContain('(cut at the output token limit: max_tokens)');
    expect(trace.stdout).toMatch(/\[unknown_or_mixed @ provider\] reply_cut: the last reply was cut/);
    expect(trace.stdout).not.toContain('findings: none');
    expect((await cli(['replay', id])).code).toBe(0);
  });

  it('a cut reply the model then finishes ends as a clean completion', async () => {
    const before = openai.requests.length;
    const run = await cli(['run', 'please finish', '--provider', 'openai', '--base-url', `${openai.url}/v1`, '--model', 'm']);
    expect(openai.requests.length - before).toBe(2);
    expect(run.stdout).toMatch(/\ncompleted · outcome \w+[^\n]*\n/);
    const ended = entriesOfRows(jsonLines((await cli(['show', idOf(run.stdout), '--json'])).stdout)).find((record) => record.type === 'session.ended')!;
    expect(ended.data).toEqual({ status: 'completed' });
  });

  it('Anthropic stop_reason "max_tokens" is handled the same way', async () => {
    const run = await cli(['run', 'hi', '--provider', 'anthropic', '--base-url', anthropic.url, '--model', 'claude-loopback']);
    expect(run.stderr).toBe('');
    expect(anthropic.requests).toHaveLength(4);
    expect(run.stdout).toMatch(/completed · outcome unverified \(no passing verification speaks for the result: rein trace says why\) — the last reply was cut at the output token limit \(max_tokens\) after 3 continuation\(s\)/);
  });
});

describe('a Stop hook that keeps objecting', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: clean });

  beforeAll(async () => {
    workspace = await makeTempDir('rein-stop-objects-');
    await mkdir(join(workspace.path, 'scripts'));
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: "echo 'tests still fail' >&2; exit 2" }] }] } }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [1, 2, 3, 4, 5].map((n) => ({ text: `Done ${n}.` })) }));
  });
  afterAll(() => workspace.remove());

  it('shows each continue in the live output, show and trace, and ends with the objection instead of a bare "completed"', async () => {
    const run = await cli(['run', 'h', '--script', 'script.json', '--yes']);
    // --yes trusts the workspace's hooks (and says so); nothing else goes to stderr.
    expect(run.stderr.replace(/^rein: trusted the command hooks of rein\.config\.json \(sha256:[0-9a-f]+…\) because of --yes\n/, '')).toBe('');
    expect(run.stdout.match(/↻ stop hook \S+: continue — tests still fail/g)).toHaveLength(4);
    expect(run.stdout).toMatch(/completed · outcome unverified \(no passing verification speaks for the result: rein trace says why\) — the stop hook \S+ still objected after 3 continuations: tests still fail/);
    const id = idOf(run.stdout);
    const show = (await cli(['show', id])).stdout;
    expect(show.match(/stop hook \S+: continue — tests still fail/g)).toHaveLength(4);
    expect(show).toMatch(/assistant: Done 1\.\n.*stop hook .*: continue — tests still fail\n.*assistant: Done 2\./);
    expect(show).toMatch(/session ended: completed \(the stop hook .* still objected after 3 continuations: tests still fail\); left open: stop_hook_objected/);
    const trace = (await cli(['trace', id])).stdout;
    expect(trace).toContain('outcome: unverified');
    expect(trace.match(/ {2}stop hook \S+: continue — tests still fail/g)).toHaveLength(4);
    expect(trace).toMatch(/\[verification_missing @ verification\] stop_hook_objection: the stop hook \S+ still objected when the session ended/);
    expect((await cli(['replay', id])).code).toBe(0);
  });
});
