import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { WATERMARK_FILE } from '../../stores/level-stream-integrity.js';
import { parseFixture } from '../../scripts/fixtures/fixture-format.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { levelForge, levelRawChain } from '../stores/level-raw-chain.js';

/**
 * Logs written before the chain (issue 25 §2): a golden log as the build before the chain stored it (codec `/3`
 * groups without chain fields, a clean-close watermark without a seal) keeps replaying, and `rein replay` says that
 * nothing vouches for it and exits 5; the chain starts where such a log is upgraded — `rein store copy --adopt` into
 * another store (chained from record 1 there), or `rein resume` of a session that can go on (its chain starts at the
 * first record the resume appends, and replay names the records before it).
 */

const golden = fileURLToPath(new URL('../fixtures/logs/tools-approvals.ndjson', import.meta.url));

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'written\n' } }] },
    { text: 'Done.' },
  ],
};

/** Rewrite a closed LevelDB stream as the build before the chain left it: no chain field, codec `/3`, no seal. */
const asWrittenBeforeTheChain = async (root: string, stream: string): Promise<number> => {
  const entries = await levelRawChain(root, stream);
  await levelForge(root, stream, entries.map(({ record }) => ({ record, field: undefined })), { dropSeal: true });
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', stream), { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  const meta = JSON.parse(Buffer.from((await database.get('m!meta'))!).toString('utf8')) as { codec: { id: string } };
  meta.codec.id = meta.codec.id.replace(/\/4$/, '/3');
  await database.put('m!meta', Buffer.from(JSON.stringify(meta)));
  await database.close();
  await writeFile(join(root, 'streams', stream, WATERMARK_FILE), JSON.stringify({ head: entries.length }));
  return entries.length;
};

describe('logs written before the chain', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  beforeAll(async () => {
    workspace = await makeTempDir('rein-pre-chain-');
  });
  afterAll(() => workspace.remove());

  it('a golden log keeps replaying and replay says nothing vouches for it (exit 5); copied with --adopt, the chain starts at record 1 of the copy', async () => {
    const fixture = parseFixture(await readFile(golden, 'utf8'), 'tools-approvals.ndjson');
    const root = join(workspace.path, '.rein');
    const store = await openLevelEventStore(root);
    await store.append(fixture.stream, fixture.records.map(({ stream: _stream, seq: _seq, ...draft }) => draft), { expectedSeq: 0, blobs: [...fixture.blobs.values()] });
    await store.close();
    const head = await asWrittenBeforeTheChain(root, fixture.stream);

    const replay = await cli(['replay', fixture.stream]);
    expect(replay.code, replay.stderr).toBe(5);
    expect(replay.stdout).toMatch(new RegExp(`^replayed ${head} records \\(\\d+ inputs re-applied, \\d+ derived records regenerated and equal\\); not chained: no record carries the chain`));
    expect(replay.stdout).toContain('rein store copy --adopt');
    expect(replay.stderr).toContain('CHAIN_UNAUTHENTICATED');
    const json = await cli(['replay', fixture.stream, '--json']);
    expect(json.code).toBe(5);
    expect(jsonLines(json.stdout)[0]).toMatchObject({ sessionId: fixture.stream, head, chain: { status: 'unchained', seq: 1, head } });
    const verify = await cli(['verify', fixture.stream]);
    expect(verify.code).toBe(5);

    // Without --adopt a copy refuses what nothing vouches for; with it, the copy is chained under this machine's key.
    const refused = await cli(['store', 'copy', '--from', root, '--to', join(workspace.path, 'refused'), '--json']);
    expect(jsonLines(refused.stdout).find((line) => line.stream === fixture.stream)).toMatchObject({ outcome: 'failed', error: { code: 'CHAIN_UNAUTHENTICATED' } });
    const copied = await cli(['store', 'copy', '--from', root, '--to', join(workspace.path, 'adopted'), '--adopt', '--json']);
    expect(copied.code, copied.stderr).toBe(0);
    expect(jsonLines(copied.stdout).find((line) => line.stream === fixture.stream)).toMatchObject({ outcome: 'copied', sourceChain: 'unchained', verified: head });
    const adopted = await cli(['replay', fixture.stream, '--store', join(workspace.path, 'adopted')]);
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(adopted.stdout).toContain(`verified ${head} records`);
    expect(adopted.stdout).toContain(`chain intact and authenticated by this machine's key`);
    expect(adopted.stdout).not.toContain('written before the chain');
  }, 120_000);

  it('a paused session written before the chain is upgraded by rein resume: the chain starts at its first new record, and replay says which records it covers from there', async () => {
    await writeFile(join(workspace.path, 'notes.txt'), 'notes\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const run = await cli(['run', 'write it', '--script', 'script.json', '--store', join(workspace.path, 'paused'), '--json']);
    expect(run.code, run.stderr).toBe(3);
    const session = jsonLines(run.stdout)[0]!.stream as string;
    const head = await asWrittenBeforeTheChain(join(workspace.path, 'paused'), session);
    expect((await cli(['verify', session, '--store', join(workspace.path, 'paused')])).code).toBe(5);

    const resumed = await cli(['resume', session, '--approve', 'write', '--store', join(workspace.path, 'paused')]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const replay = await cli(['replay', session, '--store', join(workspace.path, 'paused')]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain(`records 1..${head} were written before the chain and are covered from record ${head + 1}, where it starts`);
    const verify = await cli(['verify', session, '--store', join(workspace.path, 'paused'), '--json']);
    expect(verify.code).toBe(0);
    expect(jsonLines(verify.stdout)[0]).toMatchObject({ status: 'authenticated', chainedFrom: head + 1 });
  }, 120_000);
});
