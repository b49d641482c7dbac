import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { RecordDraft } from '../../models/envelope.js';
import { openLevelEventStore } from '../../stores/index.js';
import { GovernanceLog } from '../../src/memory/governance-log.js';
import { memoryStream } from '../../src/memory/memory-stream.js';
import { governSession } from '../../src/memory/session-governance.js';
import { memoryHints } from '../../src/projections/memory-hints.js';
import { memoryProjection } from '../../src/projections/memory.view.js';
import { valuesOf } from '../../src/projections/persistent-map.js';
import { rebuildView } from '../../src/projections/projection.js';
import { formatMs, median } from './bench-support.js';

const repo = '/work/repo';

/** `count` store records (a third in another repository, a tenth revoked) as governance-stream drafts. */
const storeDrafts = (count: number): RecordDraft[] =>
  Array.from({ length: count }, (_, index): RecordDraft => ({
    id: `p${index}`, type: 'memory.promoted', v: 1, at: index, actor: 'governance',
    data: { recordId: `m-${index}`, candidateId: `s-${index % 50}:c-${index}`, content: `fact number ${index}`, kind: 'project_fact', scope: { level: 'repo', key: index % 3 === 0 ? '/elsewhere' : repo }, confidence: index % 2 === 0 ? 'medium' : 'low', authority: 'hint', sourceRefs: [`s-${index % 50}#r${index}`], version: 1, approvedAt: index, conflictKeys: [`repo:${repo}:topic-${index % 200}`] },
  })).concat(Array.from({ length: Math.floor(count / 10) }, (_, index): RecordDraft => ({ id: `r${index}`, type: 'memory.revoked', v: 1, at: index, actor: 'user', data: { recordId: `m-${index * 10}`, reason: 'bench', by: 'user' } })));

const timed = async (repeat: number, work: () => unknown): Promise<number> => {
  const times: number[] = [];
  for (let index = 0; index < repeat; index++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return median(times);
};

/**
 * Memory governance: (1) the read side the context policy runs before every model call — `memoryHints` over a store
 * of 10,000 records (recomputed, and remembered) vs a bare pass over the same map; (2) the governance pass at a session's end — 20 candidates
 * against that store; (3) re-reading the governance stream on LevelDB with nothing new (open, read, release) vs
 * `head` of a stream this process already holds open.
 */
export const main = async (): Promise<void> => {
  let view = rebuildView(memoryProjection, []);
  let drafts: RecordDraft[] = [];
  for (const size of [1_000, 10_000]) {
    drafts = storeDrafts(size);
    view = rebuildView(memoryProjection, drafts.map((draft, index) => ({ ...draft, stream: memoryStream, seq: index + 1 })));
    const query = { workspace: repo, repo, now: 10_000_000 };
    const baseline = await timed(30, () => valuesOf(view.records).filter((record) => record.status === 'active').length);
    // A fresh view object each time defeats the memo: what a model call pays after the store changed.
    const cold = await timed(30, () => memoryHints({ ...view }, query));
    const warm = await timed(30, () => memoryHints(view, query));
    process.stdout.write(`memory: hints over ${view.records.size} records ${formatMs(cold)} after the store changed, ${formatMs(warm)} when it did not; bare pass ${formatMs(baseline)}; ratio ${(cold / baseline).toFixed(2)}×\n`);
    const session = Array.from({ length: 20 }, (_, index) => ({
      stream: 's-bench', seq: index + 1, id: `c${index}`, type: 'memory.proposed', v: 1, at: index, actor: 'root',
      data: { candidateId: `s-bench:c-${index}`, content: `fact number ${index * 7}`, kind: 'project_fact', scope: { level: 'repo', key: repo }, source: { type: 'explicit_user', eventIds: ['u1'] }, confidence: 'low', conflictKeys: [`repo:${repo}:topic-${index}`], createdBy: 'runtime' },
    }));
    const pass = await timed(5, () => governSession({ sessionId: 's-bench', records: session, view, repoKey: repo, now: 10_000_000, autoPromote: true }));
    process.stdout.write(`memory: governance pass of 20 candidates against ${view.records.size} records ${formatMs(pass)} (${formatMs(pass / 20)} per candidate)\n`);
  }

  const directory = await mkdtemp(join(tmpdir(), 'rein-bench-memory-'));
  const store = await openLevelEventStore(directory);
  try {
    for (let head = 0; head < drafts.length; head += 1_000) await store.append(memoryStream, drafts.slice(head, head + 1_000), { expectedSeq: head });
    await store.append('s-bench', [{ id: 'x', type: 'user.message', v: 1, at: 0, actor: 'root', data: { text: 'x' } }], { expectedSeq: 0 });
    const log = new GovernanceLog(store);
    const first = await timed(1, () => log.refresh());
    const refresh = await timed(50, () => log.refresh());
    const head = await timed(50, () => store.head('s-bench'));
    process.stdout.write(`memory: first read of a ${drafts.length}-record governance stream ${formatMs(first)}; refresh with nothing new ${formatMs(refresh)} (open, read, release; at most once a second per session) vs head of an open stream ${formatMs(head)}; ratio ${(refresh / head).toFixed(1)}×\n`);
  } finally {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
