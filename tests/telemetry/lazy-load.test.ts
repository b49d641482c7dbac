import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath } from '../support/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

/**
 * Every package a module loads when it is imported: its static imports and theirs, transitively (dynamic `import()`
 * is not followed — that is how telemetry defers OpenTelemetry). Reads the built JavaScript.
 */
const staticPackages = async (entry: string): Promise<Set<string>> => {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = await readFile(file, 'utf8');
    for (const match of source.matchAll(/^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"]([^'"]+)['"]/gm)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.')) await visit(resolve(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  await visit(resolve(dist, entry));
  return packages;
};

const openTelemetry = (packages: Iterable<string>) => [...packages].filter((name) => name.startsWith('@opentelemetry/'));

describe('OpenTelemetry loads only when telemetry is on', () => {
  it.each(['src/index.js', 'src/cli/commands/run.action.js', 'src/cli/commands/resume.action.js', 'src/cli/commands/trace.action.js'])('%s imports no @opentelemetry package when it loads', async (entry) => {
    const packages = await staticPackages(entry);
    expect(packages.size).toBeGreaterThan(3);
    expect(openTelemetry(packages)).toEqual([]);
  });

  it('the telemetry bridge itself does import them (so the walk above can see an import)', async () => {
    expect(openTelemetry(await staticPackages('src/telemetry/live-telemetry.js')).sort()).toEqual(['@opentelemetry/otlp-transformer', '@opentelemetry/resources']);
  });

  describe('the rein binary', () => {
    let directory: { path: string; remove: () => Promise<void> };
    let receiver: OtlpReceiver;
    let preload: string;

    beforeAll(async () => {
      directory = await makeTempDir('rein-lazy-otel-');
      receiver = await startOtlpReceiver();
      await writeFile(join(directory.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      await writeFile(
        join(directory.path, 'hook.mjs'),
        "import { appendFileSync } from 'node:fs';\nlet file;\nexport const initialize = (data) => { file = data.file; };\nexport const resolve = async (specifier, context, next) => { const resolved = await next(specifier, context); appendFileSync(file, resolved.url + '\\n'); return resolved; };\n",
      );
      preload = join(directory.path, 'preload.mjs');
      await writeFile(preload, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(directory.path, 'hook.mjs')).href)}, { data: { file: process.env.REIN_MODULE_LOG } });\n`);
    });
    afterAll(async () => {
      await receiver.close();
      await directory.remove();
    });

    const packagesLoadedBy = async (args: readonly string[], env: NodeJS.ProcessEnv) => {
      const log = join(directory.path, `modules-${Math.random().toString(36).slice(2)}.log`);
      await writeFile(log, '');
      const result = spawnSync(process.execPath, ['--import', pathToFileURL(preload).href, cliPath, ...args], { cwd: directory.path, env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', ...env, REIN_MODULE_LOG: log }, encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      const urls = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
      return new Set(urls.flatMap((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? []));
    };

    it('rein run loads no OpenTelemetry package without --otlp, and loads them with it', async () => {
      expect(openTelemetry(await packagesLoadedBy(['run', 'hi', '--script', 'script.json'], {}))).toEqual([]);
      expect(openTelemetry(await packagesLoadedBy(['run', 'hi', '--script', 'script.json', '--otlp', receiver.url], {}))).toContain('@opentelemetry/exporter-trace-otlp-proto');
    });
  });
});
