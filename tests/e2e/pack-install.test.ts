import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelExchange, shoutingModel } from '../support/loopback-model.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

const exec = promisify(execFile);
const repository = fileURLToPath(new URL('../..', import.meta.url));
/** A host's own code, typed against the published declarations of `rein` and `rein/testing`. */
const strictConsumer = `import { createRein, createMemoryEventStore, defineTool, openPostgresEventStore, ReinError, StoreError, recordTypes } from 'rein';
import type { EventStore, ReinRecord, RecordOf, PostgresEventStoreOptions, ToolDefinition, ModelProvider, SessionResult } from 'rein';
import { runScriptedSession, parseScript, checkMachine, startPostgresCluster } from 'rein/testing';
import type { ScriptedRun } from 'rein/testing';

const store: EventStore = createMemoryEventStore();
const settled = (record: ReinRecord): string | undefined => (record.type === 'tool.settled' ? record.data.observation : undefined);
const ended: RecordOf<'session.ended'>['data']['status'] = 'completed';
const options: Partial<PostgresEventStoreOptions> = {};
const code: string = new ReinError('USAGE', 'x').code;
export const used = [store, settled, ended, options, code, createRein, defineTool, openPostgresEventStore, StoreError, recordTypes, runScriptedSession, parseScript, checkMachine, startPostgresCluster];
export type Used = [ToolDefinition, ModelProvider, SessionResult, ScriptedRun];
`;

const clean = { REIN_PROVIDER: '', REIN_MODEL: '', REIN_BASE_URL: '', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' };

/** Run a command in the host project, as its developer would; resolves with the exit code and output (never rejects). */
const runIn = async (cwd: string, file: string, args: string[], env: Record<string, string> = {}) => {
  try {
    const { stdout, stderr } = await exec(file, args, { cwd, env: { ...process.env, ...clean, HOME: cwd, ...env }, maxBuffer: 32 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
};

/** The README's `rein/testing` example test, exactly as the README shows it. */
const readmeExample = async (): Promise<string> => {
  const readme = await readFile(join(repository, 'README.md'), 'utf8');
  const start = readme.indexOf('```ts\n', readme.indexOf('### Test it'));
  return readme.slice(start + '```ts\n'.length, readme.indexOf('```', start + 6));
};

describe('rein in another project, installed from its packed tarball', () => {
  let packed: { path: string; remove: () => Promise<void> };
  let project: { path: string; remove: () => Promise<void> };
  let server: LoopbackServer;

  beforeAll(async () => {
    packed = await makeTempDir('rein-pack-');
    project = await makeTempDir('rein-host-project-');
    // `npm test` built dist/ already: pack it as it is (no prepare script run again).
    const pack = await runIn(repository, 'npm', ['pack', '--ignore-scripts', '--pack-destination', packed.path, '--json']);
    expect(pack.code, pack.stderr).toBe(0);
    const filename = (JSON.parse(pack.stdout) as Array<{ filename: string }>)[0]!.filename;
    await writeFile(join(project.path, 'package.json'), JSON.stringify({ name: 'host-app', version: '1.0.0', private: true, type: 'module' }));
    // An ordinary install of the tarball: its dependencies come from npm's cache where it has them, else the registry
    // (@types/pg's `@types/node: *` is not in the cache `npm ci` fills, so a strictly offline install cannot resolve it).
    const install = await runIn(project.path, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(packed.path, filename)]);
    expect(install.code, install.stderr).toBe(0);
    // The host's own test runner (a dev dependency of theirs, not of rein): this repository's vitest.
    await symlink(join(repository, 'node_modules', 'vitest'), join(project.path, 'node_modules', 'vitest'), 'dir');
    server = await startLoopbackServer(modelExchange(shoutingModel('greeting.txt')));
  }, scaledTimeout(240_000));

  afterAll(async () => {
    await server?.close();
    await project?.remove();
    await packed?.remove();
  });

  it('npx rein --help works', async () => {
    const help = await runIn(project.path, 'npx', ['--no-install', 'rein', '--help']);
    expect(help.code, help.stderr).toBe(0);
    for (const command of ['run', 'resume', 'trace', 'replay']) expect(help.stdout).toContain(command);
  });

  it('a scripted rein run completes, and replay verifies it', async () => {
    await writeFile(join(project.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'Done: I looked around.' }] }));
    const run = await runIn(project.path, 'npx', ['--no-install', 'rein', 'run', 'look around', '--script', 'script.json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('✓ list_dir .');
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    expect((await runIn(project.path, 'npx', ['--no-install', 'rein', 'replay', id])).code).toBe(0);
  });

  it("the README's provider example runs there (an OpenAI-compatible endpoint on loopback, no key)", async () => {
    await writeFile(join(project.path, 'greeting.txt'), 'hello, world');
    const run = await runIn(project.path, 'npx', ['--no-install', 'rein', 'run', 'shout greeting.txt', '--provider', 'openai', '--base-url', `${server.url}/v1`, '--model', 'loopback-1', '--mode', 'accept-edits']);
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(project.path, 'greeting.txt'), 'utf8')).toBe('HELLO, WORLD\n');
  });

  /** The consumer project (created once): `strict`, NodeNext, `skipLibCheck: false`, the host's @types/node 20. */
  let consumer: string | undefined;
  const strictConsumerProject = async (): Promise<string> => {
    if (consumer) return consumer;
    const folder = join(project.path, 'consumer');
    await mkdir(folder, { recursive: true });
    // The host's own @types/node 20 (a dev dependency of theirs): this repository's, over the one npm hoisted for @types/pg.
    await rm(join(project.path, 'node_modules', '@types', 'node'), { recursive: true, force: true });
    await mkdir(join(project.path, 'node_modules', '@types'), { recursive: true });
    await symlink(join(repository, 'node_modules', '@types', 'node'), join(project.path, 'node_modules', '@types', 'node'), 'dir');
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] };
    await writeFile(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['main.ts'] }));
    await writeFile(join(folder, 'main.ts'), strictConsumer);
    return (consumer = folder);
  };

  /** Compiles the consumer with the tsc at `tsc` (a package's bin/tsc); resolves with tsc's report. */
  const compileConsumer = async (tsc: string) => {
    const folder = await strictConsumerProject();
    const version = await runIn(folder, process.execPath, [tsc, '--version']);
    const compiled = await runIn(folder, process.execPath, [tsc, '-p', '.']);
    return { version: version.stdout.trim(), ...compiled };
  };

  it('a strict consumer (NodeNext, skipLibCheck false, @types/node 20) compiles against the published types with TypeScript 7', async () => {
    // The host's own TypeScript 7 (the native compiler): this repository's.
    const tsc = await compileConsumer(join(repository, 'node_modules', 'typescript', 'bin', 'tsc'));
    expect(tsc.version).toMatch(/^Version 7\./);
    expect(tsc.code, `${tsc.stdout}\n${tsc.stderr}`).toBe(0);
  }, scaledTimeout(120_000));

  it('the same consumer compiles with TypeScript 6 (the last JavaScript compiler), installed from the registry beside it', async () => {
    // In a folder of its own, so npm does not prune the host project's tree (its symlinked vitest) while installing.
    const tools = join(project.path, 'typescript-6');
    await mkdir(tools, { recursive: true });
    await writeFile(join(tools, 'package.json'), JSON.stringify({ name: 'typescript-6', version: '1.0.0', private: true }));
    const install = await runIn(tools, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', 'typescript@6']);
    expect(install.code, install.stderr).toBe(0);
    const tsc = await compileConsumer(join(tools, 'node_modules', 'typescript', 'bin', 'tsc'));
    expect(tsc.version).toMatch(/^Version 6\./);
    expect(tsc.code, `${tsc.stdout}\n${tsc.stderr}`).toBe(0);
  }, scaledTimeout(240_000));

  it("the README's rein/testing example test runs unchanged, importing only from rein and rein/testing", async () => {
    const example = await readmeExample();
    expect([...example.matchAll(/from '([^']+)'/g)].map((match) => match[1]).filter((source) => !/^(node:|vitest$|fast-check$|rein$|rein\/testing$)/.test(source!))).toEqual([]);
    await mkdir(join(project.path, 'test'), { recursive: true });
    await writeFile(join(project.path, 'test', 'agent.test.ts'), example);
    const vitest = join(repository, 'node_modules', 'vitest', 'vitest.mjs');
    const tested = await runIn(project.path, process.execPath, [vitest, 'run', '--root', project.path, 'test/agent.test.ts']);
    expect(tested.code, `${tested.stdout}\n${tested.stderr}`).toBe(0);
    expect(tested.stdout).toMatch(/2 passed/);
  });
});
