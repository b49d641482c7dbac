import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProviderErrorCode } from '../../models/model.records.js';
import { recordTypes } from '../../models/records.js';
import { ToolErrorCode } from '../../models/tool.records.js';
import { buildProgram } from '../../src/cli/program.js';

const read = (relative: string) => readFile(fileURLToPath(new URL(relative, import.meta.url)), 'utf8');

/** The string literals of an exported `type <name> = 'A' | 'B' …` union in a source file. */
const unionLiterals = async (file: string, name: string): Promise<string[]> => {
  const source = await read(file);
  const start = source.indexOf(`export type ${name} =`);
  if (start < 0) throw new Error(`${name} not found in ${file}`);
  const body = source.slice(start, source.indexOf(';', start));
  return [...body.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]!);
};

describe('README documents every contract', () => {
  let readme: string;
  beforeAll(async () => {
    readme = await read('../../README.md');
  });

  it('lists every record type in the record-type table', () => {
    const missing = Object.keys(recordTypes).filter((type) => !readme.includes(`| \`${type}\` |`));
    expect(missing).toEqual([]);
  });

  it('lists every error code of every layer', async () => {
    const codes = [
      ...(await unionLiterals('../../stores/store-errors.ts', 'StoreErrorCode')),
      ...(await unionLiterals('../../src/host/host-errors.ts', 'HostErrorCode')),
      ...(await unionLiterals('../../src/projections/projection-errors.ts', 'ProjectionErrorCode')),
      ...(await unionLiterals('../../src/inspect/inspect-errors.ts', 'InspectErrorCode')),
      ...(await unionLiterals('../../src/telemetry/telemetry-errors.ts', 'TelemetryErrorCode')),
      ...(await unionLiterals('../../src/mcp/mcp-errors.ts', 'McpErrorCode')),
      ...(await unionLiterals('../../src/plugins/plugin-errors.ts', 'PluginErrorCode')),
      ...(await unionLiterals('../../src/serve/serve-errors.ts', 'ServeErrorCode')),
    ];
    expect(codes.length).toBeGreaterThan(20);
    expect(codes.filter((code) => !readme.includes(`\`${code}\``))).toEqual([]);
    expect([...ToolErrorCode.options, ...ProviderErrorCode.options].filter((code) => !readme.includes(`\`${code}\``))).toEqual([]);
  });

  it('documents every CLI command', () => {
    const commands = buildProgram(() => {}).commands.map((command) => command.name());
    expect(commands.length).toBeGreaterThan(8);
    expect(commands.filter((name) => !readme.includes(`rein ${name}`))).toEqual([]);
  });
});
