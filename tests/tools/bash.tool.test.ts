import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../src/policy/sandbox-policy.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

/** Whether a process is still running: a zombie (dead, waiting to be reaped by an init that may never reap) is not. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

const parse = (observation: string): Record<string, any> => JSON.parse(observation.replace(/^(Timeout|Cancelled): /, '')) as Record<string, any>;

describe('bash', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  let quick: ToolHarness;
  beforeAll(async () => {
    dir = await makeTempDir('rein-bash-');
    harness = await toolHarness(dir.path, { sandbox: { killGraceMs: 500 } });
    // Tests that kill a command within a fraction of a second use a plain shell: killing a login shell while its
    // profile runs can leave the profile's own lock files behind (pyenv's rehash lock, for one).
    quick = await toolHarness(dir.path, { sandbox: { killGraceMs: 500, loginShell: false } });
  });
  afterAll(() => dir.remove());

  it('reports stdout, stderr and a non-zero exit as a result, not a failure', async () => {
    const result = await harness.run('bash', { command: 'echo out; echo err >&2; exit 3' });
    expect(result.status).toBe('ok');
    const json = parse(result.observation);
    expect(json).toMatchObject({ command: 'echo out; echo err >&2; exit 3', stdout: 'out\n', stderr: 'err\n', exit_code: 3, success: false, cwd: '.' });
    expect(json.shell).toMatch(/^\/bin\/(ba)?sh$/);
  });

  it('reports the signal that ended a command', async () => {
    const json = parse((await harness.run('bash', { command: 'kill -TERM $$' })).observation);
    expect(json).toMatchObject({ exit_code: null, signal: 'SIGTERM', success: false });
  });

  it('times out softly, kills the whole process group, and a sleeping grandchild is gone', async () => {
    const result = await quick.run('bash', { command: 'sleep 30 & echo $! > grandchild.pid; sleep 30', timeout_ms: 300 });
    expect(result.errorCode).toBe('Timeout');
    expect(parse(result.observation)).toMatchObject({ timed_out: true, timeout_kind: 'soft', success: false });
    const pid = Number(await readFile(join(dir.path, 'grandchild.pid'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  });

  it('kills a command that ignores SIGTERM with SIGKILL (hard timeout)', async () => {
    const result = await quick.run('bash', { command: "trap '' TERM; sleep 30 & echo $! > stubborn.pid; while true; do sleep 0.05; done", timeout_ms: 300 });
    expect(result.errorCode).toBe('Timeout');
    expect(parse(result.observation)).toMatchObject({ timed_out: true, timeout_kind: 'hard' });
    const pid = Number(await readFile(join(dir.path, 'stubborn.pid'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  });

  it('clamps the model’s timeout to the policy maximum', async () => {
    const strict = await toolHarness(dir.path, { sandbox: { maxTimeoutMs: 200, killGraceMs: 200, loginShell: false } });
    const result = await strict.run('bash', { command: 'sleep 5', timeout_ms: 60_000 });
    expect(result.errorCode).toBe('Timeout');
    expect(parse(result.observation).duration_ms).toBeLessThan(2_000);
  });

  it('keeps 10 MB of output capped in the observation with the whole output in an artifact', async () => {
    const result = await harness.run('bash', { command: 'head -c 10485760 /dev/zero | tr "\\0" x' });
    expect(result.status).toBe('ok');
    expect(result.observation.length).toBeLessThan(20_000);
    const json = parse(result.observation);
    expect(json.stdout).toContain('truncated');
    expect(json.stdout_truncated.omitted_bytes).toBeGreaterThan(10_000_000);
    const artifact = await harness.environment.blobs.get(json.stdout_truncated.artifact);
    expect(artifact.length).toBe(10_485_760);
    expect(harness.state.artifacts.has(json.stdout_truncated.artifact)).toBe(true);
    const page = await harness.run('read_artifact', { artifact: json.stdout_truncated.artifact, limit: 1 });
    expect(page.status).toBe('ok');
  });

  it('clears the environment to the allow-list', async () => {
    process.env.REIN_TEST_SECRET = 'must-not-leak';
    try {
      const json = parse((await harness.run('bash', { command: 'env' })).observation);
      expect(json.stdout).not.toContain('REIN_TEST_SECRET');
      expect(json.stdout).toContain('PATH=');
    } finally {
      delete process.env.REIN_TEST_SECRET;
    }
  });

  it('runs with the network disabled and says whether that is enforced', async () => {
    const json = parse((await harness.run('bash', { command: 'cat /proc/net/dev | wc -l' })).observation);
    if (detectIsolation().networkOff) {
      expect(json.sandbox.network).toContain('enforced (unshare');
      // Only the header lines and the loopback device exist in a fresh network namespace.
      expect(Number(json.stdout.trim())).toBe(3);
    } else {
      expect(json.sandbox.network).toContain('not enforced');
    }
  });

  it('runs in the given working directory inside the workspace', async () => {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir.path, 'sub'), { recursive: true });
    const json = parse((await harness.run('bash', { command: 'pwd', cwd: 'sub' })).observation);
    expect(json.stdout.trim()).toBe(join(harness.workspace.root, 'sub'));
  });

  it('returns promptly for a background command', async () => {
    const started = Date.now();
    const json = parse((await quick.run('bash', { command: 'echo started; sleep 30', run_in_background: true })).observation);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(json).toMatchObject({ background: true, stdout: 'started\n' });
    process.kill(-json.pid, 'SIGKILL');
  });

  it('is cancelled with the session, killing its group', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const outcome = await quick.call('bash', { command: 'sleep 30' }, { signal: controller.signal });
    expect(outcome.kind === 'settled' && outcome.outcome.errorCode).toBe('Cancelled');
  });
});
