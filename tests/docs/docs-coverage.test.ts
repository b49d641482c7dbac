import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProviderErrorCode } from '../../models/model.records.js';
import { recordTypes } from '../../models/records.js';
import { ToolErrorCode } from '../../models/tool.records.js';
import { buildProgram } from '../../src/cli/program.js';
import { errorCodeFamilies } from '../../src/error-codes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (relative: string) => readFile(join(root, relative), 'utf8');

/** Every Markdown page under docs/, by its path from the repository's root. */
const docPages = async (): Promise<Map<string, string>> => {
  const pages = new Map<string, string>();
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(join(root, directory), { withFileTypes: true })) {
      const path = `${directory}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (entry.name.endsWith('.md')) pages.set(path, await read(path));
    }
  };
  await walk('docs');
  return pages;
};

/** The string literals of an exported `type <name> = 'A' | 'B' …` union in a source file. */
const unionLiterals = async (file: string, name: string): Promise<string[]> => {
  const source = await read(file);
  const start = source.indexOf(`export type ${name} =`);
  if (start < 0) throw new Error(`${name} not found in ${file}`);
  const body = source.slice(start, source.indexOf(';', start));
  return [...body.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]!);
};

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replaceAll('`', '')
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replaceAll(' ', '-');

/** The lines of a page outside its code blocks. */
const prose = (text: string): string[] => {
  let fence = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) fence = !fence;
    return !fence && !line.startsWith('```');
  });
};

const anchorsOf = (text: string): Set<string> => {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchorOf(heading.trim());
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
};

describe('the README is the front door and docs/ the reference', () => {
  let readme: string;
  let pages: Map<string, string>;
  let all: string;
  beforeAll(async () => {
    readme = await read('README.md');
    pages = await docPages();
    all = [...pages.values()].join('\n');
  });

  it('the README is short, its lines scannable, and the two set-up commands come first', () => {
    const lines = readme.split('\n');
    expect(lines.length).toBeLessThanOrEqual(300);
    expect(lines.filter((line) => line.length > 400)).toEqual([]);
    const firstScreen = lines.slice(0, 40).join('\n');
    expect(firstScreen).toContain('npm install && npm start');
    expect(firstScreen.indexOf('npm install && npm start')).toBeLessThan(firstScreen.indexOf('npm test'));
  });

  it('no line of a written docs page is over 400 characters outside its code blocks', () => {
    // The generated pages (docs/reference) hold one entry per line: a long meaning stays on its line.
    const long = [...pages].filter(([path]) => !path.startsWith('docs/reference/')).flatMap(([path, text]) => prose(text).filter((line) => line.length > 400).map((line) => `${path}: ${line.slice(0, 80)}…`));
    expect(long).toEqual([]);
  });

  it('every relative link of the README and the docs names a file that exists, and a heading in it', () => {
    const texts = new Map([['README.md', readme], ...pages]);
    const broken: string[] = [];
    for (const [path, text] of texts) {
      const directory = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
      for (const line of prose(text)) {
        // Inline code shows Markdown; it links nothing.
        for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = match[1]!;
          if (/^[a-z]+:/.test(target)) continue;
          const [file, anchor] = target.split('#') as [string, string | undefined];
          const resolved = file === '' ? path : join(directory, file).replaceAll('\\', '/');
          if (resolved.endsWith('.png')) continue;
          const page = texts.get(resolved);
          if (page === undefined) broken.push(`${path}: ${target} (no such page)`);
          else if (anchor !== undefined && !anchorsOf(page).has(anchor)) broken.push(`${path}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('names every record type', () => {
    const missing = Object.keys(recordTypes).filter((type) => !all.includes(`\`${type}\``));
    expect(missing).toEqual([]);
  });

  it('names every error code of every layer', async () => {
    const codes = [
      ...(await unionLiterals('stores/store-errors.ts', 'StoreErrorCode')),
      ...(await unionLiterals('src/host/host-errors.ts', 'HostErrorCode')),
      ...(await unionLiterals('src/projections/projection-errors.ts', 'ProjectionErrorCode')),
      ...(await unionLiterals('src/inspect/inspect-errors.ts', 'InspectErrorCode')),
      ...(await unionLiterals('src/telemetry/telemetry-errors.ts', 'TelemetryErrorCode')),
      ...(await unionLiterals('src/mcp/mcp-errors.ts', 'McpErrorCode')),
      ...(await unionLiterals('src/plugins/plugin-errors.ts', 'PluginErrorCode')),
      ...(await unionLiterals('src/serve/serve-errors.ts', 'ServeErrorCode')),
    ];
    expect(codes.length).toBeGreaterThan(20);
    expect(codes.filter((code) => !all.includes(`\`${code}\``))).toEqual([]);
    expect([...ToolErrorCode.options, ...ProviderErrorCode.options].filter((code) => !all.includes(`\`${code}\``))).toEqual([]);
  });

  it('the error codes page the README sends a reader to names every code of every family', () => {
    const page = pages.get('docs/errors.md')!;
    const codes = errorCodeFamilies.flatMap((family) => Object.keys(family.codes));
    expect(codes.length).toBeGreaterThan(100);
    expect(codes.filter((code) => !page.includes(`\`${code}\``))).toEqual([]);
  });

  it('gives every CLI command a section of its own in docs/cli.md', () => {
    const cli = pages.get('docs/cli.md')!;
    const headings = prose(cli).filter((line) => line.startsWith('### `rein '));
    const commands = buildProgram(() => {}).commands.map((command) => command.name());
    expect(commands.length).toBeGreaterThan(8);
    expect(commands.filter((name) => !headings.some((heading) => heading.startsWith(`### \`rein ${name}`) || (name === 'plugin' && heading.includes('<plugin>'))))).toEqual([]);
    // The index under "## Commands" (where the README sends a reader looking for one command) links every section.
    const index = cli.slice(cli.indexOf('## Commands'), cli.indexOf('\n### `rein '));
    const linked = new Set([...index.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!));
    expect(headings.map((heading) => anchorOf(heading.slice(4).trim())).filter((anchor) => !linked.has(anchor))).toEqual([]);
    // Each page the README's map names exists (the map is the docs' table of contents).
    const mapped = [...readme.matchAll(/\]\((docs\/[^)#]+\.md)\)/g)].map((match) => match[1]!);
    expect(mapped.filter((page) => !pages.has(page))).toEqual([]);
  });
});
