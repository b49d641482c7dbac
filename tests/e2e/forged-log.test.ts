import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { openLevelEventStore } from '../../stores/index.js';
import { loadChainHashing, randomChainKey } from '../../stores/chain-crypto.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { describePostgres, freshSchemaUrl, postgresUrl } from '../support/postgres.js';
import { levelForge, levelRawChain } from '../stores/level-raw-chain.js';
import { postgresForge, postgresRawChain } from '../stores/postgres-raw-chain.js';
import { relinkFrom, type ChainEntry } from '../stores/chain-forgery.js';

/**
 * The security trial's forgeries of a session's log (issue 25 §2), which `rein replay` used to call verified: a
 * `permission.decided` rewritten to a person's approval, every `permission.decided` and `approval.requested` deleted,
 * and the final `model.responded` text replaced. Each is written back the ways an attacker without this machine's key
 * can: through the public store API into a fresh store (which chains under whatever key the attacker's rein found),
 * and by editing the LevelDB values or the PostgreSQL rows by hand (relinking the keyless links, or not). `rein verify`
 * and `rein replay` must refuse every one, naming the first record changed, with the exit code of its verdict: 4 for a
 * broken chain, 5 for an intact one this machine's key did not write.
 */

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'written\n' } }] },
    { text: 'Done: out.txt written.' },
  ],
};

/** A forgery: what it does to the records, the first record it touches, and whether it leaves the log shorter than its seal. */
type Forgery = { name: string; edit: (records: RecordEnvelope[]) => RecordEnvelope[]; first: (records: RecordEnvelope[]) => number; shortens: boolean };

const dataOf = (record: RecordEnvelope): Record<string, unknown> => record.data as Record<string, unknown>;
const forgeries: Forgery[] = [
  {
    name: 'a permission.decided rewritten as a person\'s approval at the terminal',
    edit: (records) => {
      const target = records.find((record) => record.type === 'permission.decided' && dataOf(record).tool === 'write')!;
      return records.map((record) => (record === target ? { ...record, data: { ...dataOf(record), decision: 'allow', source: 'user', reason: 'approved by alice at the terminal' } } : record));
    },
    first: (records) => records.find((record) => record.type === 'permission.decided' && dataOf(record).tool === 'write')!.seq,
    shortens: false,
  },
  {
    name: 'every permission.decided and approval.requested deleted',
    edit: (records) => records.filter((record) => record.type !== 'permission.decided' && record.type !== 'approval.requested').map((record, index) => ({ ...record, seq: index + 1 })),
    first: (records) => records.find((record) => record.type === 'permission.decided' || record.type === 'approval.requested')!.seq,
    shortens: true,
  },
  {
    name: 'the final model.responded text replaced',
    edit: (records) => {
      const target = records.findLast((record) => record.type === 'model.responded')!;
      return records.map((record) => (record === target ? { ...record, data: { ...dataOf(record), text: 'I PUSHED YOUR KEYS to a public gist. Done.' } } : record));
    },
    first: (records) => records.findLast((record) => record.type === 'model.responded')!.seq,
    shortens: false,
  },
];

/** The forged records with the stored chain fields kept where the record stayed (by id), as a hand edit leaves them. */
const forgedEntries = (entries: ChainEntry[], forged: RecordEnvelope[]): ChainEntry[] => {
  const fields = new Map(entries.map((entry) => [entry.record.id, entry.field]));
  return forged.map((record) => ({ record, field: fields.get(record.id) }));
};

describe('forged logs are refused (issue 25 §2)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let session: string;
  let original: RecordEnvelope[];
  const cli = (args: string[], cwd = workspace.path) => runInProcess(args, { cwd, env: { HOME: workspace.path } });
  /** `rein verify <id> --json` in a copy of the workspace whose store holds the forgery: exit code and report. */
  const verdict = async (args: string[] = []) => {
    const verified = await cli(['verify', session, '--json', ...args]);
    return { code: verified.code, report: jsonLines(verified.stdout)[0], stderr: verified.stderr };
  };

  beforeAll(async () => {
    await loadChainHashing();
    workspace = await makeTempDir('rein-forged-');
    await writeFile(join(workspace.path, 'notes.txt'), 'notes\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    // An approval nobody answered pauses the session; a person's answer at resume lets it finish: the log then holds
    // approval.requested, the permission.decided records and the final answer.
    expect((await cli(['run', 'write it', '--script', 'script.json'])).code).toBe(3);
    session = jsonLines((await cli(['sessions', '--json'])).stdout)[0]!.id as string;
    expect((await cli(['resume', session, '--approve', 'write'])).code).toBe(0);
    const store = await openLevelEventStore(join(workspace.path, '.rein'), { readOnly: true });
    original = await store.read(session);
    await store.close();
    expect(original.some((record) => record.type === 'approval.requested')).toBe(true);
  });
  afterAll(() => workspace.remove());

  it('the untouched log verifies, replays and exits 0, naming what the chain covers', async () => {
    const { code, report } = await verdict();
    expect(code).toBe(0);
    expect(report).toMatchObject({ stream: session, status: 'authenticated', chainedFrom: 1, head: original.length, sealedHead: original.length });
    const replay = await cli(['replay', session]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain("chain intact and authenticated by this machine's key");
  });

  describe.each(forgeries)('$name', (forgery) => {
    /** Runs `check` on a copy of the store holding the forgery, then puts the original store back. */
    const withForgedStore = async (forge: (store: string) => Promise<void>, check: () => Promise<void>) => {
      const store = join(workspace.path, '.rein');
      const kept = join(workspace.path, '.rein-original');
      const { cp, rm } = await import('node:fs/promises');
      await cp(store, kept, { recursive: true });
      try {
        await forge(store);
        await check();
      } finally {
        await rm(store, { recursive: true, force: true });
        await rename(kept, store);
      }
    };

    it('written back through the public store API into a fresh store (the attacker has no key, so theirs is another): intact, not authenticated from record 1 (exit 5)', async () => {
      await withForgedStore(
        async (store) => {
          const source = await openLevelEventStore(store, { readOnly: true });
          const records = await source.read(session);
          const blobs: Uint8Array[] = [];
          for (const ref of new Set(JSON.stringify(records).match(/artifact:\/\/blake3\/[0-9a-f]{64}/g) ?? [])) blobs.push(await source.readBlob(session, ref));
          await source.close();
          const fresh = join(workspace.path, '.rein-forged');
          const attacker = await openLevelEventStore(fresh, { chainKey: (await randomChainKey()) });
          await attacker.append(session, forgery.edit(records).map(({ stream: _stream, seq: _seq, ...draft }) => draft), { expectedSeq: 0, blobs });
          await attacker.close();
          const { rm } = await import('node:fs/promises');
          await rm(store, { recursive: true, force: true });
          await rename(fresh, store);
        },
        async () => {
          const { code, report } = await verdict();
          expect(code).toBe(5);
          expect(report).toMatchObject({ status: 'unauthenticated', seq: 1 });
          const replay = await cli(['replay', session]);
          expect(replay.code).toBe(5);
          expect(replay.stderr).toMatch(/^rein: CHAIN_UNAUTHENTICATED: /);
        },
      );
    });

    it('edited in the LevelDB values by hand: broken at the first record changed (exit 4); relinked without the key: not authenticated from there (exit 5)', async () => {
      const first = forgery.first(original);
      for (const relink of [false, true]) {
        await withForgedStore(
          async (store) => {
            const entries = await levelRawChain(store, session);
            const forged = forgedEntries(entries, forgery.edit(entries.map((entry) => entry.record)));
            await levelForge(store, session, relink ? relinkFrom(forged, first - 1) : forged);
          },
          async () => {
            const { code, report } = await verdict();
            // A deletion also leaves the stream short of its seal: broken either way.
            const status = relink && !forgery.shortens ? 'unauthenticated' : 'broken';
            expect(report, `relinked: ${relink}`).toMatchObject({ status, seq: first });
            expect(code).toBe(status === 'broken' ? 4 : 5);
            if (!relink) expect((await cli(['replay', session])).code).toBe(4);
            // A forgery that keeps the length still reads (rein show is for looking, not vouching); one that cut the
            // stream below its last clean close does not.
            if (relink && !forgery.shortens) expect((await cli(['show', session])).code).toBe(0);
          },
        );
      }
    });
  });

  describePostgres('on PostgreSQL', () => {
    let admin: pg.Pool;
    beforeAll(() => {
      admin = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
    });
    afterAll(() => admin.end());

    it.each(forgeries)('$name, edited in the rows by hand, is refused; copied there by rein store copy, the untouched log verifies', async (forgery) => {
      const url = freshSchemaUrl();
      const schema = `"${new URL(url).searchParams.get('schema')}"`;
      const copied = await cli(['store', 'copy', '--from', join(workspace.path, '.rein'), '--to', url]);
      expect(copied.code, copied.stderr).toBe(0);
      expect((await verdict(['--store', url])).report).toMatchObject({ status: 'authenticated', sealedHead: original.length });
      const first = forgery.first(original);
      const entries = await postgresRawChain(admin, schema, session);
      const forged = forgedEntries(entries, forgery.edit(entries.map((entry) => entry.record)));
      await postgresForge(admin, schema, session, forged);
      const broken = await verdict(['--store', url]);
      expect(broken.report).toMatchObject({ status: 'broken', seq: first });
      expect(broken.code).toBe(4);
      await postgresForge(admin, schema, session, relinkFrom(forged, first - 1));
      const relinked = await verdict(['--store', url]);
      expect(relinked.report).toMatchObject({ status: forgery.shortens ? 'broken' : 'unauthenticated', seq: first });
      expect(relinked.code).toBe(forgery.shortens ? 4 : 5);
      expect((await cli(['replay', session, '--store', url])).code).not.toBe(0);
    });
  });
});
