import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandHooksConfig, commandHookRegistrations } from '../../src/hooks/command-hooks.js';
import { HookKernel } from '../../src/hooks/hook-kernel.js';
import { makeTempDir } from '../support/temp-dir.js';

let dir: { path: string; remove: () => Promise<void> };
const signal = new AbortController().signal;

/** Write an executable shell script into the temp dir and return its path. */
const script = async (name: string, body: string): Promise<string> => {
  const path = join(dir.path, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
};

const kernelFor = (config: unknown) => new HookKernel(commandHookRegistrations(CommandHooksConfig.parse(config), { workspace: dir.path }));

const preToolUse = (name = 'bash', input: Record<string, unknown> = { command: 'rm -rf build' }) => ({
  sessionId: 's-1',
  actor: 'root',
  cwd: dir.path,
  mode: 'default',
  tool: { name, input, callId: 'root:e2.0', effectId: 'root:e3', risk: 'execute', readOnly: false },
});

beforeAll(async () => {
  dir = await makeTempDir('rein-hooks-');
});

afterAll(async () => {
  await dir.remove();
});

describe('command hooks with real shell scripts', () => {
  it('hands the event JSON on stdin with Claude Code field names', async () => {
    const seen = join(dir.path, 'stdin.json');
    const hook = await script('capture.sh', `cat > ${seen}`);
    await kernelFor({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' });
    expect(JSON.parse(await readFile(seen, 'utf8'))).toEqual({ session_id: 's-1', cwd: dir.path, hook_event_name: 'PreToolUse', permission_mode: 'default', agent: 'root', tool_name: 'bash', tool_input: { command: 'rm -rf build' }, tool_use_id: 'root:e2.0' });
  });

  it('denies by exit 2 with stderr as the reason', async () => {
    const hook = await script('exit2.sh', `echo 'rm is not allowed here' >&2\nexit 2`);
    const decided = await kernelFor({ PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: hook }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' });
    expect(decided).toMatchObject({ decision: 'deny', reason: 'rm is not allowed here', decidedBy: 'command:PreToolUse#1' });
  });

  it('denies by JSON, asks by JSON, and rewrites the input with updatedInput', async () => {
    const deny = await script('deny.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use the trash command"}}'`);
    expect(await kernelFor({ PreToolUse: [{ hooks: [{ type: 'command', command: deny }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' })).toMatchObject({ decision: 'deny', reason: 'use the trash command' });
    const ask = await script('ask.sh', `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"deleting needs a person"}}'`);
    expect(await kernelFor({ PreToolUse: [{ hooks: [{ type: 'command', command: ask }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' })).toMatchObject({ decision: 'ask', reason: 'deleting needs a person' });
    const update = await script('update.sh', `echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"rm -rf build --interactive=never"}}}'`);
    expect(await kernelFor({ PreToolUse: [{ hooks: [{ type: 'command', command: update }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' })).toMatchObject({ decision: 'amend', amended: { command: 'rm -rf build --interactive=never' } });
  });

  it('adds context from PostToolUse (JSON) and UserPromptSubmit (plain stdout)', async () => {
    const post = await script('post.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatter rewrote 3 lines"}}'`);
    const decided = await kernelFor({ PostToolUse: [{ matcher: 'write|edit', hooks: [{ type: 'command', command: post }] }] }).decide('postToolUse', { ...preToolUse('write', { path: 'a.ts' }), result: { status: 'ok', observation: 'wrote 3 bytes' } }, { signal, tool: 'write' });
    expect(decided.additionalContext).toBe('formatter rewrote 3 lines');
    const prompt = await script('prompt.sh', `echo 'The release branch is frozen.'`);
    const submitted = await kernelFor({ UserPromptSubmit: [{ hooks: [{ type: 'command', command: prompt }] }] }).decide('userPromptSubmit', { sessionId: 's', actor: 'root', cwd: dir.path, mode: 'default', prompt: 'fix it' }, { signal });
    expect(submitted.additionalContext).toBe('The release branch is frozen.');
  });

  it('denies a hook that sleeps past its timeout, and kills its whole process group', async () => {
    const marker = join(dir.path, 'grandchild.pid');
    const hook = await script('sleepy.sh', `sleep 30 &\necho $! > ${marker}\nsleep 30`);
    const started = Date.now();
    const decided = await kernelFor({ PreToolUse: [{ hooks: [{ type: 'command', command: hook, timeout: 0.5 }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(decided.decision).toBe('deny');
    expect(decided.rows[0]!.error?.kind).toBe('timeout');
    const pid = Number((await readFile(marker, 'utf8')).trim());
    // The grandchild got SIGTERM with its group; wait (event-free poll on the process table) until it is gone.
    for (let tries = 0; tries < 100 && alive(pid); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(pid)).toBe(false);
  });

  it('denies on any other exit at PreToolUse (fail closed), but only records it elsewhere; failOpen lets the call through', async () => {
    const crash = await script('crash.sh', `echo 'jq: command not found' >&2\nexit 127`);
    const pre = await kernelFor({ PreToolUse: [{ hooks: [{ type: 'command', command: crash }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' });
    expect(pre).toMatchObject({ decision: 'deny', rows: [{ error: { kind: 'exit', exitCode: 127 } }] });
    expect(pre.reason).toContain('jq: command not found');
    const open = await kernelFor({ PreToolUse: [{ hooks: [{ type: 'command', command: crash, failOpen: true }] }] }).decide('preToolUse', preToolUse(), { signal, tool: 'bash' });
    expect(open).toMatchObject({ decision: 'none', rows: [{ failOpen: true }] });
    const post = await kernelFor({ PostToolUse: [{ hooks: [{ type: 'command', command: crash }] }] }).decide('postToolUse', { ...preToolUse(), result: { status: 'ok', observation: '' } }, { signal, tool: 'bash' });
    expect(post.decision).toBe('none');
    expect(post.rows[0]!.error?.exitCode).toBe(127);
  });

  it('lets a Stop hook ask to continue (exit 2 or decision block)', async () => {
    const again = await script('again.sh', `echo '{"decision":"block","reason":"run the tests first"}'`);
    const decided = await kernelFor({ Stop: [{ hooks: [{ type: 'command', command: again }] }] }).decide('stop', { sessionId: 's', actor: 'root', cwd: dir.path, mode: 'default', text: 'done', continuations: 0 }, { signal });
    expect(decided).toMatchObject({ decision: 'continue', reason: 'run the tests first' });
  });

  it('matches tools by rein name or Claude Code alias, and refuses unknown events', () => {
    const kernel = kernelFor({ PreToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'true' }] }] });
    expect(['write', 'edit', 'edit_lines', 'bash', 'read'].map((tool) => kernel.has('preToolUse', tool))).toEqual([true, true, true, false, false]);
    expect(CommandHooksConfig.safeParse({ BeforeTool: [] }).success).toBe(false);
    expect(CommandHooksConfig.safeParse({ PreToolUse: [{ hooks: [{ type: 'prompt', prompt: 'x' }] }] }).success).toBe(false);
  });
});

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
