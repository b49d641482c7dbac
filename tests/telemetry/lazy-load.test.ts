import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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

describe('OpenTelemetry loads only when telemetry is on', () => {
  it.each(['src/index.js', 'src/cli/main.js'])('%s does not import any @opentelemetry package when it loads', async (entry) => {
    const packages = await staticPackages(entry);
    expect(packages.size).toBeGreaterThan(3);
    expect([...packages].filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
  });

  it('the telemetry bridge itself does import them (so the check above can see an import)', async () => {
    const packages = await staticPackages('src/telemetry/live-telemetry.js');
    expect([...packages].filter((name) => name.startsWith('@opentelemetry/')).sort()).toEqual(['@opentelemetry/otlp-transformer', '@opentelemetry/resources']);
  });
});
