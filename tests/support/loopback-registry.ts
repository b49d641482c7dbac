import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A package the registry serves: its `package.json` and files (paths inside the package). */
export interface RegistryPackage {
  manifest: { name: string; version: string; bin?: string | Record<string, string>; [key: string]: unknown };
  files: Record<string, string>;
}

/** An npm registry on 127.0.0.1 speaking the real protocol (packuments, tarballs): what npm installs in a test, offline. */
export interface LoopbackRegistry {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** Every path npm asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Pack each package as npm does (a gzipped tar of `package/…`) in `dir`, and serve them. Unknown names are 404. */
export const startLoopbackRegistry = async (dir: string, packages: readonly RegistryPackage[]): Promise<LoopbackRegistry> => {
  const tarballs = new Map<string, Buffer>();
  const packuments = new Map<string, (base: string) => unknown>();
  for (const [index, pkg] of packages.entries()) {
    const root = join(dir, `pack-${index}`);
    await mkdir(join(root, 'package'), { recursive: true });
    await writeFile(join(root, 'package', 'package.json'), JSON.stringify(pkg.manifest, null, 2));
    for (const [path, text] of Object.entries(pkg.files)) {
      await mkdir(join(root, 'package', path, '..'), { recursive: true });
      await writeFile(join(root, 'package', path), text, { mode: 0o755 });
    }
    const file = join(root, 'package.tgz');
    execFileSync('tar', ['-czf', file, '-C', root, 'package']);
    const bytes = await readFile(file);
    const tarballPath = `/${pkg.manifest.name}/-/${pkg.manifest.name.split('/').pop()}-${pkg.manifest.version}.tgz`;
    tarballs.set(tarballPath, bytes);
    const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    const shasum = createHash('sha1').update(bytes).digest('hex');
    packuments.set(pkg.manifest.name, (base) => ({
      name: pkg.manifest.name,
      'dist-tags': { latest: pkg.manifest.version },
      versions: { [pkg.manifest.version]: { ...pkg.manifest, _id: `${pkg.manifest.name}@${pkg.manifest.version}`, dist: { tarball: `${base}${tarballPath.slice(1)}`, integrity, shasum } } },
    }));
  }
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? '/').split('?')[0]!);
    requests.push(path);
    const tarball = tarballs.get(path);
    if (tarball) {
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tarball.length });
      response.end(tarball);
      return;
    }
    const packument = packuments.get(path.slice(1));
    if (packument) {
      const body = JSON.stringify(packument(`http://${request.headers.host}/`));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":"Not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
};
