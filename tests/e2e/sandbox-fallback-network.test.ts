import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { jsonLines } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * Issue #25 §5: where bubblewrap and every `unshare` method are refused (a hardened kernel, a user without user
 * namespaces), the network policy cannot hold. Such a machine is made here by putting refusing `bwrap` and `unshare`
 * programs first on PATH: the probes find them as they would find the real ones failing. The commands run in this
 * process: the probes are kept per program PATH resolves to (src/policy/probe-key.ts), so the stand-ins are probed
 * afresh, not answered from the real programs' probes.
 */

const refusing = '#!/bin/sh\necho "$(basename "$0"): Operation not permitted" >&2\nexit 1\n';

const setUp = async () => {
  const dir = await makeTempDir('rein-fallback-network-');
  const bin = join(dir.path, 'bin');
  const workspace = join(dir.path, 'workspace');
  await mkdir(bin);
  await mkdir(workspace);
  for (const name of ['bwrap', 'unshare']) {
    await writeFile(join(bin, name), refusing);
    await chmod(join(bin, name), 0o755);
  }
  await writeFile(join(workspace, 'script.json'), JSON.stringify({ turns: [{ text: 'Checking.', toolCalls: [{ name: 'bash', arguments: { command: 'echo ran' } }] }, { text: 'Done.' }] }));
  const env = { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` };
  return { dir, workspace, env };
};

const bashResult = (stdout: string): { status: string; errorCode?: string; observation: string } => jsonLines(stdout).find((record) => record.type === 'tool.settled' && record.data.name === 'bash')?.data as { status: string; errorCode?: string; observation: string };

describe('the fallback says when the network policy holds nowhere, and then refuses bash (issue #25 §5)', () => {
  it('rein sandbox and the banner say "not enforced"; bash is refused unless --sandbox off or --network allow-all', async () => {
    const { dir, workspace, env } = await setUp();
    try {
      const report = await runInProcess(['sandbox', '--json'], { cwd: workspace, env });
      expect(report.code, report.stderr).toBe(0);
      expect(JSON.parse(report.stdout)).toMatchObject({ enforcement: 'fallback', network: 'disabled', networkEnforced: false, networkReason: expect.stringContaining('the network is open') });
      const text = await runInProcess(['sandbox'], { cwd: workspace, env });
      expect(text.stdout).toMatch(/network: disabled: not enforced \(.*\) — bash is refused unless --sandbox off or --network allow-all/);

      // The default policy (disabled) cannot hold: bash is refused before anything runs, and the banner says why.
      const refused = await runInProcess(['run', 'x', '--script', 'script.json', '--yes'], { cwd: workspace, env });
      expect(refused.code, refused.stderr).toBe(0);
      expect(refused.stdout).toMatch(/sandbox: fallback, not isolated \(.*\) — bash is refused \(the network policy cannot hold: --sandbox off or --network allow-all runs it\) · network disabled: not enforced/);
      const json = await runInProcess(['run', 'x', '--script', 'script.json', '--yes', '--json'], { cwd: workspace, env });
      const checked = jsonLines(json.stdout).find((record) => record.type === 'sandbox.checked')?.data;
      expect(checked).toMatchObject({ enforcement: 'fallback', network: 'disabled', networkNotEnforced: expect.stringContaining('the network is open') });
      const denied = bashResult(json.stdout);
      expect(denied).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(denied.observation).toContain('--sandbox off');
      expect(denied.observation).not.toContain('ran');
      // allow-list cannot hold either.
      const listed = await runInProcess(['run', 'x', '--script', 'script.json', '--yes', '--json', '--allow-host', 'registry.npmjs.org'], { cwd: workspace, env });
      expect(bashResult(listed.stdout)).toMatchObject({ errorCode: 'Denied' });

      // The user's choice: no sandbox at all, said so in the result; or the network open on purpose.
      const off = await runInProcess(['run', 'x', '--script', 'script.json', '--yes', '--json', '--sandbox', 'off'], { cwd: workspace, env });
      const ran = JSON.parse(bashResult(off.stdout).observation) as Record<string, any>;
      expect(ran).toMatchObject({ stdout: 'ran\n', sandbox: { enforcement: 'fallback', network: expect.stringMatching(/^disabled, not enforced: .*the network is open/) } });
      const open = await runInProcess(['run', 'x', '--script', 'script.json', '--yes', '--json', '--network', 'allow-all'], { cwd: workspace, env });
      expect(JSON.parse(bashResult(open.stdout).observation)).toMatchObject({ stdout: 'ran\n', sandbox: { network: 'allow-all, enforced (none needed)' } });
    } finally {
      await dir.remove();
    }
  }, 120_000);
});
