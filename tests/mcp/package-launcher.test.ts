import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { launchOutsideWorkspace, cliCapabilitiesFor } from '../../src/cli/capability-options.js';
import { hostHooksOutsideWorkspace } from '../../src/hooks/hook-launchers.js';
import type { McpServerConfig } from '../../src/mcp/mcp-config.js';
import { parseLauncher } from '../../src/mcp/package-launcher.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { TrustStore } from '../../src/trust/trust-store.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { startLoopbackRegistry, type LoopbackRegistry } from '../support/loopback-registry.js';
import { makeTempDir } from '../support/temp-dir.js';

const sdk = new URL('../../node_modules/@modelcontextprotocol/server/dist/index.mjs', import.meta.url).href;
const stdio = new URL('../../node_modules/@modelcontextprotocol/server/dist/stdio.mjs', import.meta.url).href;
const zod = new URL('../../node_modules/zod/index.js', import.meta.url).href;

/** The published package: an MCP server whose `echo` tool says where it runs from. */
const echoServer = `#!/usr/bin/env node
import { McpServer } from ${JSON.stringify(sdk)};
import { StdioServerTransport } from ${JSON.stringify(stdio)};
import { z } from ${JSON.stringify(zod)};
const server = new McpServer({ name: 'echo', version: '1.0.0' });
server.registerTool('echo', { description: 'Echo', inputSchema: z.object({ message: z.string() }), annotations: { readOnlyHint: true } }, async ({ message }) => ({ content: [{ type: 'text', text: 'echo ' + message + ' from ' + import.meta.url }] }));
await server.connect(new StdioServerTransport());
`;

let scratch: { path: string; remove: () => Promise<void> };
let workspace: string;
let marker: string;
let registry: LoopbackRegistry;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  scratch = await makeTempDir('rein-launcher-');
  workspace = join(scratch.path, 'repo');
  marker = join(scratch.path, 'PLANTED-CODE-RAN');
  await mkdir(workspace);
  registry = await startLoopbackRegistry(join(scratch.path, 'registry'), [{ manifest: { name: 'rein-echo-mcp', version: '1.0.0', type: 'module', bin: { 'rein-echo-mcp': 'index.js' } }, files: { 'index.js': echoServer } }]);
  // The attacker's drop: what one approved bash call could leave in the workspace — the package npx would find first,
  // its bin link, and a `node` that a `#!/usr/bin/env node` bin would start through the PATH npx sets.
  const planted = `#!/bin/sh\necho planted > ${JSON.stringify(marker)}\n`;
  for (const name of ['rein-echo-mcp', 'rein-missing-mcp']) {
    await mkdir(join(workspace, 'node_modules', name), { recursive: true });
    await writeFile(join(workspace, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '9.9.9', bin: { [name]: 'evil.sh' } }));
    await writeFile(join(workspace, 'node_modules', name, 'evil.sh'), planted, { mode: 0o755 });
  }
  await mkdir(join(workspace, 'node_modules', '.bin'), { recursive: true });
  await symlink('../rein-echo-mcp/evil.sh', join(workspace, 'node_modules', '.bin', 'rein-echo-mcp'));
  await symlink('../rein-missing-mcp/evil.sh', join(workspace, 'node_modules', '.bin', 'rein-missing-mcp'));
  await writeFile(join(workspace, 'node_modules', '.bin', 'node'), planted, { mode: 0o755 });
  await writeFile(join(workspace, 'package.json'), JSON.stringify({ name: 'repo', version: '1.0.0' }));
  // npm talks to the loopback registry only, with a cache of its own; rein's packages go under a config home of the test.
  const env = { REIN_CONFIG_HOME: join(scratch.path, 'config'), npm_config_registry: registry.url, npm_config_cache: join(scratch.path, 'npm-cache'), npm_config_update_notifier: 'false' };
  for (const [name, value] of Object.entries(env)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await registry.close();
  await scratch.remove();
});

const mcpFile = async (servers: Record<string, unknown>) => writeFile(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: servers }));

/** One session whose model calls `tool` once, with the servers `rein run --yes` would start for this workspace. */
const runWith = async (tool: string) => {
  const loaded = await cliCapabilitiesFor(workspace, { yes: true }, { interactive: false, trust: new TrustStore(join(scratch.path, 'trust.json')) });
  const store = createMemoryEventStore();
  const provider = createScriptedProvider(parseScript({ turns: [{ text: 'Calling.', toolCalls: [{ name: tool, arguments: { message: 'hi' } }] }, { text: 'Done.' }] }));
  const rein = await createRein({ store, workspace, provider, skills: false, mcpServers: loaded.mcpServers, capabilities: loaded.capabilities });
  try {
    const session = await rein.startSession({ task: 'echo' });
    await session.whenQuiet();
    const records: RecordEnvelope[] = await store.read(session.id);
    return { loaded, records, settled: records.filter((record) => record.type === 'tool.settled').map((record) => record.data as { status: string; observation: string }) };
  } finally {
    await rein.close();
  }
};

const plantedRan = () => readFile(marker, 'utf8').then(() => true, () => false);

describe('a trusted npx MCP server never runs what the model planted in the workspace (issue 25 §4)', () => {
  it('the trial: `npx -y <pkg>` with the package planted in node_modules and absent from the registry does not start, and nothing planted runs', async () => {
    await mcpFile({ fake: { command: 'npx', args: ['-y', 'rein-missing-mcp'] } });
    const run = await runWith('mcp__fake__echo');
    expect(await plantedRan()).toBe(false);
    expect(run.loaded.problems.map((problem) => problem.reason).join('\n')).toMatch(/npm could not install rein-missing-mcp/);
    expect(run.settled[0]).toMatchObject({ status: 'error' });
  }, 120_000);

  it('a legitimate `npx -y <pkg>` keeps working: the package from the registry runs from rein\'s packages folder, on the host', async () => {
    await mcpFile({ echo: { command: 'npx', args: ['-y', 'rein-echo-mcp'] } });
    const first = await runWith('mcp__echo__echo');
    expect(first.settled[0]).toMatchObject({ status: 'ok' });
    expect(first.settled[0]!.observation).toMatch(new RegExp(`echo hi from file://${join(scratch.path, 'config', 'packages')}/[0-9a-f]{16}/node_modules/rein-echo-mcp/index\\.js`));
    expect(await plantedRan()).toBe(false);
    expect(first.loaded.mcpServers.echo).toMatchObject({ command: process.execPath });
    expect((first.loaded.mcpServers.echo as { sandbox?: boolean }).sandbox).toBeUndefined();
    // The next run reuses the install: npm is not asked again.
    const asked = registry.requests.length;
    const second = await runWith('mcp__echo__echo');
    expect(second.settled[0]).toMatchObject({ status: 'ok' });
    expect(registry.requests.length).toBe(asked);
  }, 120_000);

  it('every launcher spelling counts; one rein cannot read runs in the sandbox, or not at all when it asks for the host', async () => {
    for (const argv of [['npx', '-y', 'rein-echo-mcp', '--flag'], ['npm', 'exec', '--yes', '--', 'rein-echo-mcp', '--flag'], ['npm', 'x', '-y', 'rein-echo-mcp', '--flag'], ['pnpm', 'dlx', 'rein-echo-mcp', '--flag'], ['yarn', 'dlx', 'rein-echo-mcp', '--flag'], ['bunx', 'rein-echo-mcp', '--flag'], ['bun', 'x', 'rein-echo-mcp', '--flag'], ['/usr/bin/npx', '--yes', 'rein-echo-mcp', '--flag']]) {
      expect(parseLauncher(argv), argv.join(' ')).toMatchObject({ packages: ['rein-echo-mcp'], args: ['--flag'] });
    }
    expect(parseLauncher(['npx', '-y', '-p', 'pkg-a', '-p', 'pkg-b', 'tool', 'x'])).toMatchObject({ packages: ['pkg-a', 'pkg-b'], command: 'tool', args: ['x'] });
    for (const argv of [['npx', '-c', 'eslint .'], ['npx', './tool'], ['npx', '--workspace', 'a', 'x'], ['npm', 'exec'], ['npm', 'run', 'server'], ['pnpm', 'exec', 'x'], ['yarn', 'exec', 'x'], ['npx', 'file:../x']]) {
      expect(parseLauncher(argv), argv.join(' ')).toHaveProperty('unreadable');
    }
    expect(parseLauncher(['node', 'srv.js'])).toBeUndefined();
    const unreadable = { command: 'npx', args: ['-c', 'mcp-srv'] } as McpServerConfig;
    expect(await launchOutsideWorkspace(workspace, unreadable)).toEqual({ config: { ...unreadable, sandbox: true } });
    expect(await launchOutsideWorkspace(workspace, { command: 'sh', args: ['-c', 'npx -y rein-echo-mcp'] } as McpServerConfig)).toMatchObject({ config: { sandbox: true } });
    expect(await launchOutsideWorkspace(workspace, { ...unreadable, sandbox: false } as McpServerConfig)).toHaveProperty('problem');
    // A server that asks for the sandbox keeps its launcher: inside, the workspace is what the model's commands get anyway.
    const boxed = { command: 'npx', args: ['-y', 'rein-echo-mcp'], sandbox: true } as McpServerConfig;
    expect(await launchOutsideWorkspace(workspace, boxed)).toEqual({ config: boxed });
  }, 120_000);

  it('a host command hook that runs a launcher runs the package from rein\'s folder; one rein cannot rewrite moves into the sandbox', async () => {
    const { hooks, warnings } = await hostHooksOutsideWorkspace(
      {
        PreToolUse: [
          {
            hooks: [
              { type: 'command', command: 'npx -y rein-echo-mcp --check', sandbox: false },
              { type: 'command', command: 'npx -c "lint-staged"', sandbox: false },
              { type: 'command', command: 'cd tools && npx -y rein-echo-mcp', sandbox: false },
              { type: 'command', command: 'npx -y rein-echo-mcp', sandbox: true },
              { type: 'command', command: './guard.sh', sandbox: false },
            ],
          },
        ],
      },
      workspace,
    );
    const [rewritten, unreadable, longer, boxed, plain] = hooks.PreToolUse![0]!.hooks;
    expect(rewritten!.command).toMatch(new RegExp(`^'${process.execPath}' '${join(scratch.path, 'config', 'packages')}/[0-9a-f]{16}/node_modules/rein-echo-mcp/index\\.js' '--check'$`));
    expect(rewritten!.sandbox).toBe(false);
    expect(unreadable).toMatchObject({ command: 'npx -c "lint-staged"', sandbox: true });
    expect(longer).toMatchObject({ sandbox: true });
    expect(boxed).toMatchObject({ command: 'npx -y rein-echo-mcp', sandbox: true });
    expect(plain).toMatchObject({ command: './guard.sh', sandbox: false });
    expect(warnings).toHaveLength(2);
  }, 120_000);
});
