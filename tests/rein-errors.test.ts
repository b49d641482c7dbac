import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as rein from 'rein';
import { createMemoryEventStore, createRein, createScriptedProvider, openLevelEventStore, ReinError, StoreError, StreamLockedError, type Rein } from 'rein';
import { runScriptedSession } from 'rein/testing';
import { makeTempDir } from './support/temp-dir.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every TypeScript source file under `folder` (relative to the repository root). */
const sources = async (folder: string): Promise<string[]> => {
  const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => join(entry.parentPath, entry.name));
};

describe('every error rein throws is a ReinError with its code', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let harness: Rein;
  beforeAll(async () => {
    workspace = await makeTempDir('rein-errors-');
    harness = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: createScriptedProvider({ turns: [{ text: 'done' }] }) });
  });
  afterAll(() => workspace.remove());

  it('exports every error class from the public door, each a ReinError subclass', () => {
    const classes = Object.entries(rein).filter(([name, value]) => typeof value === 'function' && /Error$/.test(name) && name !== 'providerError');
    expect(classes.map(([name]) => name)).toEqual(expect.arrayContaining(['ReinError', 'StoreError', 'StreamLockedError', 'BlobError', 'CodecMismatchError', 'UnsupportedVersionError', 'FencedError', 'McpError', 'PluginError', 'MemoryError', 'ProjectionError', 'InspectError', 'TelemetryError', 'DivergenceError']));
    for (const [name, value] of classes) expect(value === ReinError || (value as { prototype: unknown }).prototype instanceof ReinError, name).toBe(true);
  });

  it('declares no error class outside ReinError in the library', async () => {
    const files = [...(await sources('src')), ...(await sources('stores')), ...(await sources('models'))].filter((file) => !file.includes('/src/cli/'));
    const offenders: string[] = [];
    for (const file of files) {
      for (const match of (await readFile(file, 'utf8')).matchAll(/class (\w+) extends Error\b/g)) {
        // An internal parse error that never leaves the file that catches it is not thrown across a boundary.
        if (match[1] !== 'GitConfigSyntaxError') offenders.push(`${file.slice(root.length)}: ${match[1]}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('throws a bare ReinError only with a code HostErrorCode lists (the README documents that union)', async () => {
    const hostErrors = await readFile(join(root, 'src/host/host-errors.ts'), 'utf8');
    const union = hostErrors.slice(hostErrors.indexOf('export type HostErrorCode ='), hostErrors.indexOf(';', hostErrors.indexOf('export type HostErrorCode =')));
    const listed = new Set([...union.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]));
    const unlisted: string[] = [];
    for (const file of await sources('src')) {
      for (const match of (await readFile(file, 'utf8')).matchAll(/new ReinError\('([A-Z_]+)'/g)) if (!listed.has(match[1])) unlisted.push(`${file.slice(root.length)}: ${match[1]}`);
    }
    expect(unlisted).toEqual([]);
  });

  it('a second process holding a session is a StreamLockedError a host can catch as ReinError', async () => {
    const directory = await makeTempDir('rein-errors-locked-');
    const first = await openLevelEventStore(directory.path);
    const second = await openLevelEventStore(directory.path);
    try {
      await first.append('s-held', [{ id: 'r1', type: 'user.message', v: 1, at: 1, actor: 'root', data: { text: 'x' } }], { expectedSeq: 0 });
      const error = await second.append('s-held', [{ id: 'r2', type: 'user.message', v: 1, at: 2, actor: 'root', data: { text: 'y' } }], { expectedSeq: 1 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StreamLockedError);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toBeInstanceOf(ReinError);
      expect(error).toMatchObject({ code: 'STORE_LOCKED' });
    } finally {
      await second.close();
      await first.close();
      await directory.remove();
    }
  });

  it('a session id that cannot be one is SESSION_INVALID, in the API’s words rather than the store’s', async () => {
    for (const attempt of [
      () => harness.createSession({ task: 'x', sessionId: '../escape' }),
      () => harness.getSession('a b'),
      () => harness.replaySession(''),
      () => harness.resumeSession('/etc'),
      () => harness.forkSession('ok', 1, { newSessionId: 'no/slash' }),
    ]) {
      const error = await attempt().then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(ReinError);
      expect(error).toMatchObject({ code: 'SESSION_INVALID' });
      expect((error as Error).message).not.toMatch(/stream/);
    }
  });

  it('a session id already taken is SESSION_INVALID (found by the first append, not a read before it) and its log is untouched', async () => {
    const directory = await makeTempDir('rein-errors-taken-');
    const level = await openLevelEventStore(join(directory.path, '.rein'));
    try {
      for (const store of [createMemoryEventStore(), level]) {
        const host = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider({ turns: [{ text: 'done' }] }) });
        const first = await host.createSession({ task: 'x', sessionId: 's-taken' });
        const before = await store.read('s-taken');
        const error = await host.createSession({ task: 'y', sessionId: 's-taken' }).then(() => undefined, (caught: unknown) => caught);
        expect(error).toBeInstanceOf(ReinError);
        expect(error).toMatchObject({ code: 'SESSION_INVALID', message: 'session s-taken already exists' });
        expect(await store.read('s-taken')).toEqual(before);
        await first.release();
        await host.close();
      }
    } finally {
      await level.close();
      await directory.remove();
    }
  });

  it('forkSession names its own argument, not a command-line flag', async () => {
    const run = await runScriptedSession({ script: { turns: [{ text: 'done' }] }, workspace: workspace.path });
    const error = await run.rein.forkSession(run.session.id, 10_000).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'USAGE' });
    expect((error as Error).message).not.toMatch(/--/);
    expect((error as Error).message).toContain('atSeq');
  });

  it('two tools with one name are CONFIG_INVALID', async () => {
    const tool = rein.defineTool({ name: 'twice', description: 'x', parameters: (await import('zod')).z.object({}), annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false, requiresConfirmation: false }, risk: 'read', sideEffect: 'read', resumePolicy: 'rerun-after-check', execute: async () => ({ ok: true, output: '' }) });
    const error = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: createScriptedProvider({ turns: [] }), tools: [tool, tool] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReinError);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
  });
});
