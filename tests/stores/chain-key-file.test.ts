import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChainKey, randomChainKey, recordDigest } from '../../stores/chain-crypto.js';
import { chainKeyPath, loadChainKey } from '../../stores/chain-key-file.js';
import { openLevelEventStore } from '../../stores/index.js';
import { protectedPathsOf, userProtectedPaths } from '../../src/policy/protected-paths.js';
import { drafts, expectCode, temporaryDirectory } from './store-test-support.js';

describe('the chain key', () => {
  let home: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    home = await temporaryDirectory('rein-chain-key-');
  });
  afterEach(() => home.remove());

  it('lives in rein\'s configuration folder, or where REIN_CHAIN_KEY_FILE says', () => {
    expect(chainKeyPath({ REIN_CONFIG_HOME: '/cfg' })).toBe('/cfg/chain.key');
    expect(chainKeyPath({ XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/rein/chain.key');
    expect(chainKeyPath({ REIN_CONFIG_HOME: '/cfg', REIN_CHAIN_KEY_FILE: '/secrets/rein.key' })).toBe('/secrets/rein.key');
  });

  it('is created on first use by a writer, mode 0600 in a 0700 folder, and the same key is found again', async () => {
    const env = { REIN_CONFIG_HOME: join(home.path, 'config', 'rein') };
    expect(await loadChainKey({ create: false, env })).toBeUndefined();
    const created = await loadChainKey({ create: true, env });
    const path = chainKeyPath(env);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home.path, 'config', 'rein'))).mode & 0o777).toBe(0o700);
    expect((await readFile(path, 'latin1')).trim()).toMatch(/^[0-9a-f]{64}$/);
    expect((await loadChainKey({ create: false, env }))!.id).toBe(created!.id);
    // Writers racing to create it agree on one key.
    const fresh = { REIN_CHAIN_KEY_FILE: join(home.path, 'race', 'chain.key') };
    const keys = await Promise.all(Array.from({ length: 6 }, () => loadChainKey({ create: true, env: fresh })));
    expect(new Set(keys.map((key) => key!.id)).size).toBe(1);
  });

  it('refuses a key file other users can read or write, one that is not a file, and one that holds no key', async () => {
    const path = join(home.path, 'chain.key');
    const env = { REIN_CHAIN_KEY_FILE: path };
    await writeFile(path, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    expect(await loadChainKey({ create: false, env })).toBeInstanceOf(ChainKey);
    await chmod(path, 0o644);
    await expectCode(loadChainKey({ create: false, env }), 'CHAIN_KEY_INVALID');
    await chmod(path, 0o600);
    await writeFile(path, 'not a key\n');
    await expectCode(loadChainKey({ create: false, env }), 'CHAIN_KEY_INVALID');
    await expectCode(loadChainKey({ create: false, env: { REIN_CHAIN_KEY_FILE: home.path } }), 'CHAIN_KEY_INVALID');
    // A key where none can be made is said plainly.
    await writeFile(join(home.path, 'file'), '');
    await expectCode(loadChainKey({ create: true, env: { REIN_CHAIN_KEY_FILE: join(home.path, 'file', 'chain.key') } }), 'CHAIN_KEY_UNAVAILABLE');
  });

  it('is never printed: it shows, serialises and inspects as its id', async () => {
    const key = (await randomChainKey());
    expect(key.id).toMatch(/^[0-9a-f]{8}$/);
    expect(JSON.stringify({ key })).toBe(`{"key":{"chainKey":"${key.id}"}}`);
    expect(String(key)).toBe(`ChainKey(${key.id})`);
    expect(inspect(key, { showHidden: true, depth: 5 })).toBe(`ChainKey(${key.id})`);
    expect((await ChainKey.create(Buffer.alloc(32, 1))).id).toBe((await ChainKey.create(Buffer.alloc(32, 1))).id);
    expect((await ChainKey.create(Buffer.alloc(32, 1))).id).not.toBe((await ChainKey.create(Buffer.alloc(32, 2))).id);
  });

  it('MACs with keyed BLAKE3 that reused hashers never mix up: the same input gives the same MAC, interleaved or not', async () => {
    const { createBLAKE3 } = await import('hash-wasm');
    const bytes = Buffer.alloc(32, 9);
    const key = await ChainKey.create(bytes);
    const other = await ChainKey.create(Buffer.alloc(32, 8));
    const digest = Buffer.alloc(32, 3);
    const reference = (await createBLAKE3(256, bytes)).init().update('rein/chain-mac/1\0').update(digest).digest('binary').subarray(0, 8);
    expect(Buffer.from(key.mac(digest))).toEqual(Buffer.from(reference));
    other.mac(Buffer.alloc(32, 1));
    recordDigest(new Uint8Array(0), Buffer.from('something else'));
    expect(Buffer.from(key.mac(digest))).toEqual(Buffer.from(reference));
    expect(Buffer.from(other.mac(digest))).not.toEqual(Buffer.from(reference));
    // Random keys and digests: the MAC (one block, hashed in JavaScript) is hash-wasm's keyed BLAKE3, whatever the bytes.
    for (let round = 0; round < 20; round++) {
      const keyBytes = randomBytes(32);
      const random = await ChainKey.create(keyBytes);
      const randomDigest = randomBytes(32);
      const expected = (await createBLAKE3(256, keyBytes)).init().update('rein/chain-mac/1\0').update(randomDigest).digest('binary').subarray(0, 8);
      expect(Buffer.from(random.mac(randomDigest))).toEqual(Buffer.from(expected));
    }
    // Tags (seals, snapshots; hashed in JavaScript) are hash-wasm's keyed BLAKE3 of the domain and the parts, short or long.
    for (const size of [0, 1, 20, 40, 63, 64, 65, 200, 1023, 1024, 1025, 3000]) {
      const keyBytes = randomBytes(32);
      const parts = [randomBytes(size), Uint8Array.of(0), randomBytes(8), randomBytes(12)];
      const hasher = (await createBLAKE3(256, keyBytes)).init().update('rein/seal/1\0');
      for (const part of parts) hasher.update(part);
      expect(Buffer.from((await ChainKey.create(keyBytes)).tag('seal', parts)), `size ${size}`).toEqual(Buffer.from(hasher.digest('binary').subarray(0, 16)));
    }
    // Written in place (a record's chain field): the same MAC, behind what is already there.
    const field = new Uint8Array(12).fill(7);
    key.macInto(digest, field, 4);
    expect(Buffer.from(field.subarray(4))).toEqual(Buffer.from(reference));
    expect([...field.subarray(0, 4)]).toEqual([7, 7, 7, 7]);
    const plain = (await createBLAKE3(256)).init().update('rein/chain/1\0').update(Uint8Array.of(0)).update(Buffer.from('record')).digest('binary');
    expect(Buffer.from(recordDigest(new Uint8Array(0), Buffer.from('record')))).toEqual(Buffer.from(plain));
  });

  it('is what a store uses by default: a writer creates it, a read-only store never does and cannot authenticate without it', async () => {
    const path = join(home.path, 'machine', 'chain.key');
    const before = process.env.REIN_CHAIN_KEY_FILE;
    process.env.REIN_CHAIN_KEY_FILE = path;
    try {
      const root = join(home.path, 'store');
      const reader = await openLevelEventStore(root, { readOnly: true });
      expect(await reader.verifyChain('s')).toMatchObject({ head: 0 });
      await reader.close();
      await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
      const writer = await openLevelEventStore(root);
      await writer.append('s', drafts(1, 3), { expectedSeq: 0 });
      await writer.close();
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      const again = await openLevelEventStore(root, { readOnly: true });
      expect(await again.verifyChain('s')).toMatchObject({ status: 'authenticated', keyId: (await loadChainKey({ create: false }))!.id });
      await again.close();
      // Another machine (another key) finds the log intact but not its own.
      const elsewhere = await openLevelEventStore(root, { readOnly: true, chainKey: (await randomChainKey()) });
      expect(await elsewhere.verifyChain('s')).toMatchObject({ status: 'unauthenticated', seq: 1 });
      await elsewhere.close();
    } finally {
      process.env.REIN_CHAIN_KEY_FILE = before;
    }
  });

  it('is protected wherever a workspace would reach it: the configuration folder, or the file REIN_CHAIN_KEY_FILE names', async () => {
    const workspace = join(home.path, 'workspace');
    await mkdir(workspace);
    expect(userProtectedPaths({ REIN_CONFIG_HOME: '/cfg' })).toContain('/cfg');
    expect(userProtectedPaths({ REIN_CONFIG_HOME: '/cfg', REIN_CHAIN_KEY_FILE: '/secrets/k' })).toContain('/secrets/k');
    const before = process.env.REIN_CHAIN_KEY_FILE;
    process.env.REIN_CHAIN_KEY_FILE = join(workspace, 'keys', 'chain.key');
    try {
      await mkdir(join(workspace, 'keys'));
      expect(protectedPathsOf(workspace)).toContain(join(workspace, 'keys', 'chain.key'));
    } finally {
      process.env.REIN_CHAIN_KEY_FILE = before;
    }
  });
});
