import { chown, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxIdentity, sandboxUidRange } from '../../src/policy/sandbox-identity.js';
import { toolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { requireBubblewrap } from '../support/sandbox.js';

const sandboxed = await requireBubblewrap();
const root = process.getuid?.() === 0;

const parse = (observation: string): Record<string, any> => JSON.parse(observation) as Record<string, any>;

/*
 * rein as root gives each command a fresh unprivileged uid and maps the workspace to it (issue #25 §1): inside, the
 * command owns the workspace; outside, what it creates belongs to the workspace folder's owner, as if no sandbox had
 * been there.
 */
describe.runIf(sandboxed && root)('who runs a command when rein is root', () => {
  it('a fresh unprivileged uid per command, named in the sandbox, owning the workspace; files it creates are the owner\'s on the host', async () => {
    const dir = await makeTempDir('rein-identity-');
    try {
      const harness = await toolHarness(dir.path);
      expect(await sandboxIdentity(dir.path)).toMatchObject({ kind: 'mapped', ownerUid: 0 });
      await writeFile(join(dir.path, 'existing.txt'), 'x');
      const command = 'echo "$(id -u) $(whoami) $(stat -c %u existing.txt)"; echo new > made.txt; mkdir made; cat /etc/shadow >/dev/null 2>&1 || echo no-shadow';
      const [first, second] = await Promise.all([harness.run('bash', { command }), harness.run('bash', { command })]);
      const lines = [first, second].map((result) => parse(result.observation).stdout.split('\n') as string[]);
      const uids = lines.map((output) => Number(output[0]!.split(' ')[0]));
      for (const [index, output] of lines.entries()) {
        const [uid, name, owner] = output[0]!.split(' ');
        expect(Number(uid)).toBeGreaterThanOrEqual(sandboxUidRange.first);
        expect(Number(uid)).toBeLessThan(sandboxUidRange.first + sandboxUidRange.count);
        expect([name, owner]).toEqual(['rein-sandbox', uid]);
        expect(output[1], `command ${index}`).toBe('no-shadow');
      }
      expect(uids[0]).not.toBe(uids[1]);
      expect(parse(first.observation).sandbox).toMatchObject({ user: expect.stringMatching(/^enforced \(uid \d+, unprivileged/), processes: expect.stringContaining('enforced (prlimit --nproc, as an unprivileged uid of its own)') });
      for (const made of ['made.txt', 'made']) expect((await stat(join(dir.path, made))).uid, made).toBe(0);
    } finally {
      await dir.remove();
    }
  });

  it('a workspace another user owns: the command owns that user\'s files, and what it creates is theirs', async () => {
    const dir = await makeTempDir('rein-identity-owner-');
    try {
      const workspace = join(dir.path, 'project');
      await mkdir(workspace);
      await writeFile(join(workspace, 'theirs.txt'), 'x');
      for (const path of [workspace, join(workspace, 'theirs.txt')]) await chown(path, 4242, 4343);
      const harness = await toolHarness(workspace);
      const result = parse((await harness.run('bash', { command: 'echo more >> theirs.txt && touch created && echo ok' })).observation);
      expect(result.stdout, result.stderr).toBe('ok\n');
      const created = await stat(join(workspace, 'created'));
      expect([created.uid, created.gid]).toEqual([4242, 4343]);
    } finally {
      await dir.remove();
    }
  });
});
