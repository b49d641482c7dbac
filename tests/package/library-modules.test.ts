import { spawnSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageOfUrl, readModuleLog, writeResolveHook } from '../support/module-census.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * What `import 'rein'` loads decides how fast a host starts (issue 31: a package that loads what it uses). A probe
 * inside the package imports `rein` through its own `exports` (the built library, dist/lib), runs a whole session on
 * the in-memory store with one tool, and lists every module Node loaded: ES modules through a resolve hook
 * (tests/support/module-census.ts), CommonJS ones from the require cache. The time is measured by
 * scripts/bench/import.bench.ts, never asserted here.
 */

const repository = fileURLToPath(new URL('../../', import.meta.url));

const probe = (hookUrl: string, log: string, workspace: string): string => `import { createRequire, register } from 'node:module';
import { appendFileSync } from 'node:fs';
register(${JSON.stringify(hookUrl)}, { data: { file: ${JSON.stringify(log)} } });
const { createRein, createMemoryEventStore, createScriptedProvider, parseScript, defineTool } = await import('rein');
const { z } = await import('zod');
const noop = defineTool({
  name: 'noop', description: 'Does nothing.', parameters: z.object({}).strict(),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false, requiresConfirmation: false },
  risk: 'read', sideEffect: 'none', resumePolicy: 'rerun-after-check', execute: async () => ({ ok: true, output: 'ok' }),
});
const script = parseScript({ turns: [{ text: 'go', toolCalls: [{ name: 'noop', arguments: {} }] }, { text: 'done' }] });
const rein = await createRein({ store: createMemoryEventStore(), workspace: ${JSON.stringify(workspace)}, provider: createScriptedProvider(script), tools: [noop] });
const session = await rein.startSession({ task: 'probe' });
const result = await session.whenQuiet();
await rein.close?.();
appendFileSync(${JSON.stringify(log)}, Object.keys(createRequire(import.meta.url).cache).map((path) => 'file://' + path).join('\\n') + '\\n');
console.log(result.status);
`;

let directory: { path: string; remove: () => Promise<void> };
let probePath: string;
let urls: string[];
let status: string;

beforeAll(async () => {
  directory = await makeTempDir('rein-import-');
  const hook = await writeResolveHook(directory.path);
  const log = join(directory.path, 'modules.log');
  await writeFile(log, '');
  // Inside the package, so `import 'rein'` resolves through package.json `exports` as a host's import does.
  probePath = join(repository, 'dist', `.import-probe-${process.pid}-${Date.now()}.mjs`);
  await writeFile(probePath, probe(hook, log, directory.path));
  const run = spawnSync(process.execPath, [probePath], { cwd: directory.path, encoding: 'utf8', timeout: 120_000 });
  expect(run.status, run.stderr).toBe(0);
  status = run.stdout.trim();
  urls = await readModuleLog(log);
}, 150_000);

afterAll(async () => {
  await rm(probePath, { force: true });
  await directory?.remove();
});

describe("import 'rein' loads only what a host uses", () => {
  it('runs a session on the in-memory store with one tool', () => {
    expect(status).toBe('completed');
  });

  it('loads no PostgreSQL driver, OpenTelemetry, MCP SDK, LevelDB, YAML or glob library, native msgpack extractor', () => {
    const packages = new Set(urls.flatMap((url) => packageOfUrl(url) ?? []));
    const unused = ['pg', 'pg-connection-string', '@modelcontextprotocol/client', 'classic-level', 'abstract-level', 'yaml', 'tinyglobby', 'msgpackr-extract', 'detect-libc', 'ws', '@statelyai/inspect', 'commander', 'gpt-tokenizer', '@agentclientprotocol/sdk'];
    expect(unused.filter((name) => packages.has(name))).toEqual([]);
    expect([...packages].filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
  });

  it('loads the bundled library, not rein’s ~350 compiled files or rxjs’s CommonJS build', () => {
    const rein = urls.filter((url) => url.startsWith(pathToFileURL(join(repository, 'dist')).href));
    expect(rein.filter((url) => !url.includes('/dist/lib/') && !url.includes('/.import-probe-'))).toEqual([]);
    expect(rein.length).toBeLessThan(30);
    // rxjs, xstate, msgpackr and tslib are inside the bundle; zod too (the probe, as a host, loads its own copy).
    for (const name of ['rxjs', 'xstate', 'msgpackr', 'tslib']) expect(urls.filter((url) => packageOfUrl(url) === name), name).toEqual([]);
    expect(urls.length).toBeLessThan(200);
  });

  it("carries none of zod's locales: rein imports zod as a namespace (`import * as z`), so the bundler drops what is unused", async () => {
    // `import { z } from 'zod'` binds zod's whole namespace object, locales included (~500 KB of the bundle, all of it
    // parsed at every start). German and Russian messages stand for the 40-odd locales; English is zod's default.
    const files = (await readdir(join(repository, 'dist/lib'), { recursive: true })).filter((name) => name.endsWith('.js'));
    expect(files.length).toBeGreaterThan(1);
    for (const name of files) {
      const text = await readFile(join(repository, 'dist/lib', name), 'utf8');
      expect(text.includes('ltige Eingabe'), name).toBe(false);
      expect(text.includes('\\u041D\\u0435\\u0432\\u0435\\u0440\\u043D\\u044B\\u0439') || text.includes('Неверный'), name).toBe(false);
    }
  });
});
