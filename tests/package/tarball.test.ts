import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

/*
 * The tarball holds what users run (issue 31): the bundled CLI and library, the viewer's page, the type declarations,
 * the README, the docs/ pages its links open, and package.json. No benchmark, demo or build script, no tsc output the `exports` never reach, and no
 * source map (a map would point at .ts files the tarball does not ship). `npm pack --dry-run` lists what `npm publish`
 * would send; every path must match the allow-list, and what the package's entry points name must be there.
 */

const repository = fileURLToPath(new URL('../../', import.meta.url));

/** Every path the tarball may hold. */
const allowed: readonly RegExp[] = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^dist\/cli\/[\w./-]+\.js$/,
  /^dist\/lib\/[\w./-]+\.js$/,
  /^dist\/ui\/[\w.-]+\.(js|css|html)$/,
  /^dist\/(src|models|machines|stores)\/[\w./-]+\.d\.ts$/,
  /^docs\/[\w./-]+\.md$/,
  /^docs\/images\/[\w.-]+\.png$/,
];

let files: string[];

beforeAll(async () => {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repository, maxBuffer: 64 * 1024 * 1024 });
  files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path);
}, 120_000);

describe('the npm tarball', () => {
  it('holds only allow-listed paths: no scripts, no unbundled tsc output, no source maps', () => {
    expect(files.filter((path) => !allowed.some((pattern) => pattern.test(path)))).toEqual([]);
    expect(files.filter((path) => path.endsWith('.map') || path.includes('/scripts/') || path.includes('bench') || path.includes('demo'))).toEqual([]);
  });

  it('holds every file package.json points at: the bin, each export and its types', async () => {
    const manifest = JSON.parse(await readFile(`${repository}package.json`, 'utf8')) as { bin: Record<string, string>; exports: Record<string, { types: string; default: string }> };
    const targets = [...Object.values(manifest.bin), ...Object.values(manifest.exports).flatMap((entry) => [entry.types, entry.default])].map((path) => path.replace(/^\.\//, ''));
    expect(targets.length).toBeGreaterThan(4);
    expect(targets.filter((path) => !files.includes(path))).toEqual([]);
    expect(files).toContain('dist/ui/index.html');
  });

  it('ships the declarations the public types reach (every relative import of a shipped .d.ts is shipped)', async () => {
    const shipped = new Set(files);
    const missing: string[] = [];
    for (const path of files.filter((file) => file.endsWith('.d.ts'))) {
      const text = await readFile(`${repository}${path}`, 'utf8');
      for (const match of text.matchAll(/(?:from |import\()['"](\.{1,2}\/[^'"]+)\.js['"]/g)) {
        const target = new URL(`${match[1]}.d.ts`, `file:///${path}`).pathname.slice(1);
        if (!shipped.has(target)) missing.push(`${path} → ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('opens every relative link of its README and docs pages: a reader in node_modules/rein follows them to shipped files', async () => {
    const shipped = new Set(files);
    const pages = files.filter((path) => path.endsWith('.md'));
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/cli.md', 'docs/reference/records.md', 'docs/reference/errors.md']));
    const broken: string[] = [];
    for (const page of pages) {
      // Links only: code blocks and code spans (which quote link syntax as text) are left out.
      const text = (await readFile(`${repository}${page}`, 'utf8')).replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
      for (const match of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const path = decodeURIComponent(new URL(target, `file:///${page}`).pathname.slice(1));
        if (!shipped.has(path)) broken.push(`${page} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
