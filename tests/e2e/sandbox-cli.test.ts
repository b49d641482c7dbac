import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { requireBubblewrap, requireSocat } from '../support/sandbox.js';

const sandboxed = await requireBubblewrap();

describe('rein sandbox and the sandbox settings', () => {
  it('prints the enforcement found by the probe, the protected paths and every bind; the file and the flags set the policy', async () => {
    const workspace = await makeTempDir('rein-sandbox-cli-');
    try {
      const root = await realpath(workspace.path);
      await mkdir(join(root, '.rein'));
      await writeFile(join(root, 'rein.config.json'), JSON.stringify({ sandbox: { network: 'allow-list', allowedHosts: ['registry.npmjs.org'] } }));
      // The MCP file and a skills folder are protected entries of the same data module: masked where they exist.
      await writeFile(join(root, '.mcp.json'), JSON.stringify({ mcpServers: {} }));
      await mkdir(join(root, '.agents', 'skills'), { recursive: true });
      const json = await runInProcess(['sandbox', '--json'], { cwd: root });
      expect(json.code).toBe(0);
      const report = JSON.parse(json.stdout) as Record<string, any>;
      expect(report).toMatchObject({ mode: 'auto', network: 'allow-list', allowedHosts: ['registry.npmjs.org'], loginShell: false });
      // Masked only where bubblewrap hides them; without it an existing protected path is within a command's reach.
      const existing = sandboxed ? 'masked' : 'exposed';
      const protectedStates = (state: string) => [
        { path: join(root, '.rein'), state },
        { path: join(root, 'rein.config.json'), state },
        { path: join(root, '.mcp.json'), state },
        { path: join(root, '.agents/skills'), state },
        { path: join(root, '.claude/skills'), state: 'absent' },
        { path: join(root, '.rein-plugins'), state: 'absent' },
        // The repository's git configuration and hooks (trial 7 G13): no repository here.
        ...['.git/config', '.git/config.worktree', '.git/hooks', '.git/info/attributes'].map((path) => ({ path: join(root, path), state: 'absent' })),
        // The project instruction files at the root (issue 29): none here.
        ...['AGENTS.md', 'CLAUDE.md'].map((path) => ({ path: join(root, path), state: 'absent' })),
      ];
      expect(report.protected).toEqual(protectedStates(existing));
      if (sandboxed) {
        expect(report.enforcement).toBe('bubblewrap');
        expect(report.binds).toContainEqual(expect.objectContaining({ kind: 'bind', target: root }));
        expect(report.binds).toContainEqual(expect.objectContaining({ kind: 'mask-directory', target: join(root, '.rein') }));
        expect(report.binds).toContainEqual(expect.objectContaining({ kind: 'mask-file', target: join(root, 'rein.config.json') }));
        expect(report.binds).toContainEqual(expect.objectContaining({ kind: 'mask-file', target: join(root, '.mcp.json') }));
        expect(report.binds).toContainEqual(expect.objectContaining({ kind: 'mask-directory', target: join(root, '.agents/skills') }));
      }
      const off = JSON.parse((await runInProcess(['sandbox', '--json', '--sandbox', 'off', '--network', 'disabled'], { cwd: root })).stdout) as Record<string, any>;
      expect(off).toMatchObject({ enforcement: 'fallback', reason: 'the sandbox is off (mode "off")', network: 'disabled', binds: [] });
      // The sandbox off: nothing is masked, and --json says so as the text does.
      expect(off.protected).toEqual(protectedStates('exposed'));
      expect((await runInProcess(['sandbox', '--sandbox', 'off'], { cwd: root })).stdout).toContain(`${join(root, '.rein')}  — exists; not hidden from commands without the sandbox`);
      const text = await runInProcess(['sandbox'], { cwd: root });
      expect(text.stdout).toContain(sandboxed ? 'enforcement: bubblewrap' : 'enforcement: fallback');
      expect(text.stdout).toContain('network: allow-list (registry.npmjs.org)');
    } finally {
      await workspace.remove();
    }
  });

  it('a workspace file cannot turn the sandbox off, open the network to every host or use a login shell on its own (trial 6 F16)', async () => {
    const workspace = await makeTempDir('rein-sandbox-widen-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      for (const [sandbox, flag] of [[{ mode: 'off' }, '--sandbox off'], [{ network: 'allow-all' }, '--network allow-all'], [{ loginShell: true }, '--login-shell'], [{ maxProcesses: 100_000 }, '--max-processes 100000'], [{ maxTmpMb: 4096 }, '--max-tmp-mb 4096']] as const) {
        await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ sandbox }));
        const run = await runInProcess(['run', 'x', '--script', 'script.json'], { cwd: workspace.path });
        expect([run.code, run.stderr], JSON.stringify(sandbox)).toEqual([2, expect.stringContaining(`confirm with ${flag}`)]);
        const confirmed = await runInProcess(['run', 'x', '--script', 'script.json', ...flag.split(' ')], { cwd: workspace.path });
        expect(confirmed.code, confirmed.stderr).toBe(0);
      }
      // Lower limits narrow: they stand, and rein sandbox shows them; a flag that is not a whole number in range is USAGE.
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ sandbox: { mode: 'required', network: 'disabled', maxProcesses: 100, maxMemoryMb: 512, maxTmpMb: 16 } }));
      const narrowed = await runInProcess(['sandbox', '--json'], { cwd: workspace.path });
      expect(narrowed.code).toBe(0);
      expect(JSON.parse(narrowed.stdout).limits).toMatchObject({ processes: { max: 100 }, memoryMb: { max: 512 }, tmpMb: { max: 16 } });
      expect(JSON.parse((await runInProcess(['sandbox', '--json', '--max-tmp-mb', '32'], { cwd: workspace.path })).stdout).limits.tmpMb.max).toBe(32);
      for (const bad of [['--max-processes', '0'], ['--max-tmp-mb', '1e3'], ['--max-memory-mb', '8']]) expect((await runInProcess(['sandbox', ...bad], { cwd: workspace.path })).code, bad.join(' ')).toBe(2);
    } finally {
      await workspace.remove();
    }
  });

  it('a workspace file cannot open this machine, a private address or a whole top-level domain to commands on its own (trial 7 G6)', async () => {
    const workspace = await makeTempDir('rein-sandbox-hosts-');
    const server = createServer((_request, response) => response.end('host-service-reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    try {
      const ownAddress = Object.values(networkInterfaces()).flatMap((list) => list ?? []).find((entry) => !entry.internal && entry.family === 'IPv4')?.address;
      for (const host of ['127.0.0.1', 'localhost', '[::1]', '169.254.169.254', '*.com', '*.internal', '*.localhost', '10.1.2.3', ...(ownAddress ? [ownAddress] : [])]) {
        await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ sandbox: { network: 'allow-list', allowedHosts: ['registry.npmjs.org', host] } }));
        const report = await runInProcess(['sandbox'], { cwd: workspace.path });
        expect([report.code, report.stderr], host).toEqual([2, expect.stringContaining(`lets commands reach ${host} (`)]);
        expect(report.stderr).toContain('confirm with --allow-host');
      }
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ sandbox: { network: 'allow-list', allowedHosts: ['registry.npmjs.org', '*.example.com', '203.0.113.7'] } }));
      expect((await runInProcess(['sandbox'], { cwd: workspace.path })).code).toBe(0);
      // The trial's escape: a command reached a service on the host's loopback through rein's proxy. Now the run is
      // refused before anything runs, and reaches the service only when the user names the host with --allow-host.
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ sandbox: { network: 'allow-list', allowedHosts: ['127.0.0.1'] } }));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: '1', toolCalls: [{ name: 'bash', arguments: { command: `curl -s --max-time 5 http://127.0.0.1:${port}/ > got.txt; echo done` } }] }, { text: 'Done.' }] }));
      const refused = await runInProcess(['run', 'x', '--script', 'script.json', '--yes'], { cwd: workspace.path });
      expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('rein.config.json lets commands reach 127.0.0.1 (this machine)')]);
      expect(existsSync(join(workspace.path, 'got.txt'))).toBe(false);
      if (sandboxed && requireSocat()) {
        const confirmed = await runInProcess(['run', 'x', '--script', 'script.json', '--yes', '--allow-host', '127.0.0.1'], { cwd: workspace.path });
        expect(confirmed.code, confirmed.stdout + confirmed.stderr).toBe(0);
        expect(await readFile(join(workspace.path, 'got.txt'), 'utf8')).toBe('host-service-reached');
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await workspace.remove();
    }
  }, 120_000);

  it('refuses bad settings: a bad flag is a usage error, a bad sandbox object CONFIG_INVALID, a bad createRein option USAGE', async () => {
    const workspace = await makeTempDir('rein-sandbox-bad-');
    try {
      const flag = await runInProcess(['sandbox', '--allow-host', 'not a host'], { cwd: workspace.path });
      expect(flag.code).toBe(2);
      expect(flag.stderr).toContain('rein: USAGE: --allow-host');
      expect((await runInProcess(['run', 'x', '--script', 's.json', '--network', 'open'], { cwd: workspace.path })).code).toBe(2);
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ sandbox: { mode: 'strict' } }));
      const file = await runInProcess(['sandbox'], { cwd: workspace.path });
      expect(file.code).toBe(2);
      expect(file.stderr).toContain('rein: CONFIG_INVALID');
      await expect(createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: createScriptedProvider(parseScript({ turns: [] })), sandbox: { allowedHosts: ['not a host'] } })).rejects.toMatchObject({ code: 'USAGE' });
    } finally {
      await workspace.remove();
    }
  });

  it('rein run says which sandbox isolates its commands, and records it once', async () => {
    const workspace = await makeTempDir('rein-sandbox-run-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Hello.' }] }));
      const result = await runInProcess(['run', 'say hello', '--script', 'script.json'], { cwd: workspace.path });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(sandboxed ? 'sandbox: bubblewrap · network disabled' : 'sandbox: fallback, not isolated');
      const json = await runInProcess(['run', 'say hello', '--script', 'script.json', '--json', '--sandbox', 'off'], { cwd: workspace.path });
      const checked = json.stdout.split('\n').filter((line) => line.includes('"sandbox.checked"'));
      expect(checked).toHaveLength(1);
      expect(JSON.parse(checked[0]!).data).toEqual({ enforcement: 'fallback', mode: 'off', network: 'disabled', reason: 'the sandbox is off (mode "off")', limits: { maxProcesses: 1024, maxMemoryMb: 4096, maxTmpMb: 1024 } });
    } finally {
      await workspace.remove();
    }
  });
});
