import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../src/policy/sandbox-policy.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';
import { eventually, markedProcesses, newMarker, requireBubblewrap } from '../support/sandbox.js';

const sandboxed = await requireBubblewrap();

const parse = (observation: string): Record<string, any> => JSON.parse(observation.replace(/^(Timeout|Cancelled): /, '')) as Record<string, any>;

describe('bash', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  let quick: ToolHarness;
  beforeAll(async () => {
    dir = await makeTempDir('rein-bash-');
    harness = await toolHarness(dir.path, { sandbox: { killGraceMs: 500 } });
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
    // Outside a sandbox Node sees the signal; bubblewrap passes it on as exit status 143 (128 + 15).
    expect(json).toMatchObject({ exit_code: sandboxed ? 143 : null, signal: 'SIGTERM', success: false });
  });

  it('times out softly, kills everything it started, and a sleeping grandchild is gone', async () => {
    const marker = newMarker();
    const result = await quick.run('bash', { command: `export REIN_TEST_MARK=${marker}; sleep 30 & sleep 30`, timeout_ms: 300 });
    expect(result.errorCode).toBe('Timeout');
    expect(parse(result.observation)).toMatchObject({ timed_out: true, timeout_kind: 'soft', success: false });
    expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
  });

  it('kills a command that ignores SIGTERM with SIGKILL (hard timeout), and a detached grandchild with it', async () => {
    // The soft timeout must come after `trap` ran: on a loaded machine bash (in bubblewrap) can take longer to get there.
    const marker = newMarker();
    const result = await quick.run('bash', { command: `export REIN_TEST_MARK=${marker}; trap '' TERM; setsid sleep 30 & sleep 30 & while true; do sleep 0.05; done`, timeout_ms: scaledTimeout(600) });
    expect(result.errorCode).toBe('Timeout');
    expect(parse(result.observation)).toMatchObject({ timed_out: true, timeout_kind: 'hard' });
    expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
  });

  it('leaves nothing running after the command exits, not even `setsid … & disown`', async () => {
    const marker = newMarker();
    const result = await quick.run('bash', { command: `export REIN_TEST_MARK=${marker}; setsid sleep 30 & disown; nohup sleep 30 >/dev/null 2>&1 & echo done` });
    expect(parse(result.observation)).toMatchObject({ stdout: 'done\n', success: true });
    expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
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
    if (sandboxed) {
      expect(json.sandbox).toMatchObject({ enforcement: 'bubblewrap', network: 'disabled, enforced (bubblewrap --unshare-net)' });
      expect(Number(json.stdout.trim())).toBe(3);
    } else if (detectIsolation().networkOff) {
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
    const marker = newMarker();
    const json = parse((await quick.run('bash', { command: `export REIN_TEST_MARK=${marker}; echo started; sleep 30`, run_in_background: true })).observation);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(json).toMatchObject({ background: true, stdout: 'started\n', exit_code: null, success: null });
    expect(markedProcesses(marker).length).toBeGreaterThan(0);
    process.kill(-json.pid, 'SIGKILL');
    expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
  });

  it('is cancelled with the session, killing its group', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const outcome = await quick.call('bash', { command: 'sleep 30' }, { signal: controller.signal });
    expect(outcome.kind === 'settled' && outcome.outcome.errorCode).toBe('Cancelled');
  });
});

describe('bash without the OS sandbox (mode off): the fallback measures', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let fallback: ToolHarness;
  beforeAll(async () => {
    dir = await makeTempDir('rein-bash-off-');
    fallback = await toolHarness(dir.path, { sandbox: { mode: 'off', killGraceMs: 500 } });
  });
  afterAll(() => dir.remove());

  it('says the sandbox is off, and why', async () => {
    const json = parse((await fallback.run('bash', { command: 'true' })).observation);
    expect(json.sandbox).toMatchObject({ enforcement: 'fallback', reason: 'the sandbox is off (mode "off")', filesystem: 'not enforced: the sandbox is off (mode "off")' });
  });

  it('still kills what a timed-out command left, detached children included', async () => {
    const marker = newMarker();
    const result = await fallback.run('bash', { command: `export REIN_TEST_MARK=${marker}; setsid sleep 30 & sleep 30`, timeout_ms: 300 });
    expect(result.errorCode).toBe('Timeout');
    expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
  });

  it('kills `setsid … & disown` when the command exits, found by the call marker', async () => {
    const marker = newMarker();
    const result = await fallback.run('bash', { command: `export REIN_TEST_MARK=${marker}; setsid sleep 30 & disown; echo done` });
    expect(parse(result.observation)).toMatchObject({ stdout: 'done\n' });
    expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
  });

  it('refuses to run anything when the mode is required and bubblewrap does not work', async () => {
    const required = await toolHarness(dir.path, { sandbox: { mode: 'required', bubblewrap: '/nonexistent/bwrap' } });
    const result = await required.run('bash', { command: 'touch should-not-exist' });
    expect(result.errorCode).toBe('Denied');
    expect(result.observation).toContain('bubblewrap (/nonexistent/bwrap) is not installed');
    expect(JSON.stringify(result.facts)).toContain('sandbox_unavailable');
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(dir.path, 'should-not-exist'))).toBe(false);
  });
});
