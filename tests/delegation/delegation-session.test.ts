import { writeFile, readFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore, verifyRecords } from 'rein/testing';
import { createRein, type ReinOptions } from '../../src/rein.js';
import type { ReinSession } from '../../src/session/session-handle.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { DelegationFailed, DelegationJoined, DelegationStarted, DelegationValidated } from '../../models/delegation.records.js';
import type { EventStore } from '../../stores/event-store.js';
import { actorProvider, brokenReport, delegate, submit, validReport, type ActorReply } from '../support/delegation-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';
import { entriesOf, flattenRecords } from '../../src/host/step-record.js';

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup) await step();
  cleanup = [];
});

const setup = async (replies: Record<string, ActorReply[]>, options: Partial<ReinOptions> = {}) => {
  const workspace = await makeTempDir();
  cleanup.push(workspace.remove);
  await writeFile(join(workspace.path, 'a.txt'), 'alpha-secret-marker\n');
  const store = options.store ?? createMemoryEventStore();
  const rein = await createRein({ store, workspace: workspace.path, provider: actorProvider(replies), sandbox: { loginShell: false }, ...options });
  return { rein, store, workspace: workspace.path };
};

const of = (records: readonly RecordEnvelope[], type: string) => flattenRecords(records).filter((record) => record.type === type);

const inputOf = async (store: EventStore, sessionId: string, record: RecordEnvelope): Promise<string> => Buffer.from(await store.readBlob(sessionId, (record.data as { input: string }).input)).toString('utf8');

const finish = async (session: ReinSession) => {
  const result = await session.whenQuiet();
  return result;
};

const replayed = async (store: EventStore, session: ReinSession) => {
  const records = await store.read(session.id);
  const replay = verifyRecords(session.id, records);
  expect(replay.tree?.persisted()).toEqual(session.persistedSnapshot());
  replay.tree?.stop();
  return records;
};

/** A child ended with a valid report from a MutationReady turn, and its delegation's join was satisfied. */
const expectChildCompleted = (records: readonly RecordEnvelope[], taskId: string) => {
  const completed = of(records, 'delegation.completed').map((record) => record.data as { taskId: string; reportStatus: string; report: Record<string, unknown>; evidence: { turnId: string } });
  expect(completed.find((entry) => entry.taskId === taskId)).toMatchObject({ reportStatus: 'completed', report: { status: 'completed' }, evidence: { turnId: expect.any(String) } });
  expect(of(records, 'delegation.failed').filter((record) => (record.data as DelegationFailed).taskId === taskId)).toEqual([]);
  expect(of(records, 'delegation.joined').map((record) => (record.data as DelegationJoined).outcome)).toEqual(['satisfied']);
};

const explorer = (id: string, extra: Record<string, unknown> = {}) => ({ id, role: 'explorer', objective: `look at a.txt (${id})`, ...extra });

describe('a delegating session', () => {
  it('a broken report gets one correction round, then the child fails with a contract failure and the parent goes on', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('x')]), { text: 'Done.' }], x: [submit(brokenReport()), submit(brokenReport())] });
    const session = await rein.startSession({ task: 'delegate' });
    expect((await finish(session)).status).toBe('completed');
    const records = await replayed(store, session);
    expect(of(records, 'report.rejected').map((record) => record.data)).toMatchObject([{ reason: 'invalid', attempt: 1, final: false }, { reason: 'invalid', attempt: 2, final: true }]);
    expect(of(records, 'delegation.failed').map((record) => (record.data as DelegationFailed).failureClass)).toEqual(['contract']);
    expect((of(records, 'delegation.joined')[0]!.data as DelegationJoined).outcome).toBe('unsatisfied');
    expect(of(records, 'delegation.completed')).toEqual([]);
  });

  it('a reply without a report is corrected once with a harness note; the valid report that follows completes the child', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('x')]), { text: 'Done.' }], x: [{ text: 'I looked.' }, submit(validReport('finding-report', 'completed'))] });
    const session = await rein.startSession({ task: 'delegate' });
    expect((await finish(session)).status).toBe('completed');
    const records = await replayed(store, session);
    expect(of(records, 'report.rejected').map((record) => record.data)).toMatchObject([{ reason: 'missing', attempt: 1, final: false }]);
    const childInputs = of(records, 'context.projected').filter((record) => record.actor.endsWith('/x'));
    expect(await inputOf(store, session.id, childInputs[1]!)).toContain('did not call submit_report');
    expect((of(records, 'delegation.joined')[0]!.data as DelegationJoined).outcome).toBe('satisfied');
  });

  it('only the structured report reaches the parent: never the child\'s transcript', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('x', { context_mode: 'clean' })]), { text: 'Done.' }], x: [{ text: 'reading', calls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, submit(validReport('finding-report', 'completed'))] });
    const session = await rein.startSession({ task: 'delegate' });
    await finish(session);
    const records = await replayed(store, session);
    const child = of(records, 'context.projected').filter((record) => record.actor.endsWith('/x'));
    expect(await inputOf(store, session.id, child[1]!)).toContain('alpha-secret-marker');
    const parentAfterJoin = of(records, 'context.projected').filter((record) => record.actor === 'root').pop()!;
    const parentInput = await inputOf(store, session.id, parentAfterJoin);
    expect(parentInput).toContain('a.txt says alpha');
    expect(parentInput).not.toContain('alpha-secret-marker');
  });

  it('a child\'s approval goes to the host\'s approval flow, the child waits, and the answer lets it go on', async () => {
    const { rein, store, workspace } = await setup({
      root: [delegate([{ id: 'w', role: 'worker', objective: 'create made.txt' }]), { text: 'Done.' }],
      w: [{ text: 'making', calls: [{ name: 'bash', arguments: { command: 'touch made.txt' } }] }, submit(validReport('patch-proposal', 'completed'))],
    });
    const session = await rein.startSession({ task: 'delegate' });
    const paused = await finish(session);
    expect(paused.status).toBe('paused');
    const [request] = session.pendingApprovals();
    expect(request).toMatchObject({ actor: expect.stringMatching(/^root\/delegation-\d+\/w$/), tool: 'bash', approvalId: expect.stringMatching(/^root\/delegation-\d+\/w\/approval-\d+$/) });
    const before = await store.read(session.id);
    expect(of(before, 'delegation.permission-escalated').map((record) => record.data)).toMatchObject([{ taskId: 'w', approvalId: request!.approvalId, tool: 'bash' }]);
    await expect(access(join(workspace, 'made.txt'))).rejects.toThrow();
    await session.approve(request!.approvalId, { decision: 'allow-once' });
    expect((await finish(session)).status).toBe('completed');
    await access(join(workspace, 'made.txt'));
    expectChildCompleted(await replayed(store, session), 'w');
  });

  it('a child waiting for approval survives a restart: resume lists its question and the session completes', async () => {
    // The second round resumes under another policy (answers given in advance, as `rein resume --yes` does): the
    // child's next turn runs under the new digest and still reaches MutationReady.
    for (const [snapshotEvery, approveAll] of [[0, false], [1, false], [0, true]] as const) {
      const replies = { root: [delegate([{ id: 'w', role: 'worker', objective: 'create made.txt' }]), { text: 'Done.' }], w: [{ text: 'making', calls: [{ name: 'bash', arguments: { command: 'touch made.txt' } }] }, submit(validReport('patch-proposal', 'completed'))] } satisfies Record<string, ActorReply[]>;
      const { rein, store, workspace } = await setup(replies, { snapshotEvery });
      const session = await rein.startSession({ task: 'delegate' });
      expect((await finish(session)).status).toBe('paused');
      const approvalId = session.pendingApprovals()[0]!.approvalId;
      await rein.close('restart');
      const again = await createRein({ store, workspace, provider: actorProvider(replies), sandbox: { loginShell: false }, snapshotEvery, permissions: { approveAll } });
      const { session: resumed, report } = await again.resumeSession(session.id);
      // The nested actor tree restores from its snapshot; were it not to, resume would fall back to a full replay and log why.
      if (snapshotEvery === 1) expect(report.snapshotSeq !== undefined || report.snapshotRejected !== undefined).toBe(true);
      if (report.snapshotRejected) expect(of(await store.read(session.id), 'snapshot.rejected')).toHaveLength(1);
      expect(report.resolutions.map((resolution) => [resolution.kind, resolution.resolution])).toEqual([['startTimer', 'rerun']]);
      expect(resumed.pendingApprovals().map((pending) => pending.approvalId)).toEqual([approvalId]);
      await resumed.approve(approvalId, { decision: 'allow-once' });
      expect((await finish(resumed)).status).toBe('completed');
      const records = await replayed(store, resumed);
      expectChildCompleted(records, 'w');
      expect(of(records, 'policy.changed').map((record) => record.actor)).toEqual(approveAll ? ['root', expect.stringMatching(/^root\/delegation-\d+\/w$/)] : []);
    }
  });

  it('a child\'s model call in flight when the process stops is in doubt on resume and runs again', async () => {
    const { rein, store, workspace } = await setup({ root: [delegate([explorer('x')])], x: ['hang'] });
    const session = await rein.createSession({ task: 'delegate' });
    const calling = new Promise<void>((resolve) => session.live$.subscribe((event) => event.type === 'effect.started' && event.actor.endsWith('/x') && event.kind === 'callModel' && resolve()));
    await session.send('delegate');
    await calling;
    await session.interrupt('the process stops');
    expect((await finish(session)).status).toBe('interrupted');
    const again = await createRein({ store, workspace, provider: actorProvider({ root: [delegate([explorer('x')]), { text: 'Done.' }], x: [submit(validReport('finding-report', 'completed'))] }), sandbox: { loginShell: false } });
    const { session: resumed, report } = await again.resumeSession(session.id);
    expect(report.resolutions.map((resolution) => [resolution.kind, resolution.resolution]).sort()).toEqual([['callModel', 'rerun'], ['startTimer', 'rerun']]);
    expect((await finish(resumed)).status).toBe('completed');
    const records = await replayed(store, resumed);
    expect((of(records, 'delegation.joined')[0]!.data as DelegationJoined).outcome).toBe('satisfied');
  });

  it('on resume only the deadline of a child still running is in doubt; a finished child\'s timer is not resumed', async () => {
    const { rein, store, workspace } = await setup({ root: [delegate([explorer('done'), explorer('busy')])], done: [submit(validReport('finding-report', 'completed'))], busy: ['hang'] });
    const session = await rein.createSession({ task: 'delegate' });
    const finished = new Promise<void>((resolve) => session.live$.subscribe((event) => event.type === 'effect.started' && event.actor.endsWith('/busy') && event.kind === 'callModel' && resolve()));
    await session.send('delegate');
    await finished;
    while (!of(await store.read(session.id), 'delegation.completed').length) await new Promise((resolve) => setTimeout(resolve, 5));
    await session.interrupt('the process stops');
    expect((await finish(session)).status).toBe('interrupted');
    const again = await createRein({ store, workspace, provider: actorProvider({ root: [delegate([explorer('done'), explorer('busy')]), { text: 'Done.' }], busy: [submit(validReport('finding-report', 'completed'))] }), sandbox: { loginShell: false } });
    const { session: resumed, report } = await again.resumeSession(session.id);
    const timers = report.resolutions.filter((resolution) => resolution.kind === 'startTimer');
    expect(timers.map((resolution) => resolution.resolution)).toEqual(['rerun']);
    const busyTimer = of(await store.read(session.id), 'effect.requested').find((record) => (record.data as { args: { child?: string } }).args.child?.endsWith('/busy'));
    expect(timers[0]!.effectId).toBe((busyTimer!.data as { effectId: string }).effectId);
    expect((await finish(resumed)).status).toBe('completed');
    const records = await replayed(store, resumed);
    expect((of(records, 'delegation.joined')[0]!.data as DelegationJoined).outcome).toBe('satisfied');
  });

  it('a child past its deadline is stopped by its timer and fails as a runtime failure; the parent goes on', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('slow', { budgets: { max_wall_time_ms: 1_000 } })]), { text: 'Done.' }], slow: ['hang'] });
    const session = await rein.startSession({ task: 'delegate' });
    expect((await finish(session)).status).toBe('completed');
    const records = await replayed(store, session);
    expect(of(records, 'timer.fired')).toHaveLength(1);
    expect(of(records, 'delegation.failed').map((record) => record.data)).toMatchObject([{ taskId: 'slow', failureClass: 'runtime' }]);
  });

  it('cancelling the parent cancels every child and records why; nothing is left running', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('a'), explorer('b')])], a: ['hang'], b: ['hang'] });
    const session = await rein.createSession({ task: 'delegate' });
    const started = new Promise<void>((resolve) => session.records$.subscribe((record) => entriesOf(record).some((entry) => entry.type === 'delegation.started') && resolve()));
    await session.send('delegate');
    await started;
    await session.cancel('the user changed their mind');
    expect((await finish(session)).status).toBe('cancelled');
    const records = await replayed(store, session);
    expect(of(records, 'delegation.failed').map((record) => (record.data as DelegationFailed).cancelled)).toEqual([true, true]);
    expect((of(records, 'delegation.joined')[0]!.data as DelegationJoined).outcome).toBe('cancelled');
  });

  it('first-success joins on the first good report and cancels the child still working', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('fast'), explorer('slow')], { policy: 'first-success' }), { text: 'Done.' }], fast: [submit(validReport('finding-report', 'completed'))], slow: ['hang'] });
    const session = await rein.startSession({ task: 'delegate' });
    expect((await finish(session)).status).toBe('completed');
    const records = await replayed(store, session);
    const joined = of(records, 'delegation.joined')[0]!.data as DelegationJoined;
    expect(joined.outcome).toBe('satisfied');
    expect(joined.children.map((child) => [child.taskId, child.status])).toEqual([['fast', 'completed'], ['slow', 'cancelled']]);
  });

  it('reviewers who disagree are a semantic conflict in the join, not a vote', async () => {
    const { rein, store } = await setup({
      root: [delegate([{ id: 'r1', role: 'reviewer', objective: 'review' }, { id: 'r2', role: 'reviewer', objective: 'review' }]), { text: 'Done.' }],
      r1: [submit(validReport('review-report', 'completed'))],
      r2: [submit(validReport('review-report', 'partial'))],
    });
    const session = await rein.startSession({ task: 'delegate' });
    await finish(session);
    const records = await replayed(store, session);
    const joined = of(records, 'delegation.joined')[0]!.data as DelegationJoined;
    expect(joined.conflicts).toMatchObject([{ class: 'semantic-conflict', tasks: ['r1', 'r2'], subject: 'review verdict' }]);
    expect(joined.observation).toContain('reviewers disagree');
  });
});

describe('the rights ceiling', () => {
  it('refuses a role whose required tools the parent cannot give, before any child starts, with the options', async () => {
    const { rein, store } = await setup({ root: [delegate([{ id: 't', role: 'tester', objective: 'run the tests' }]), { text: 'Done.' }] }, { permissions: { mode: 'plan' } });
    const session = await rein.startSession({ task: 'delegate' });
    await finish(session);
    const records = await replayed(store, session);
    const validated = of(records, 'delegation.validated')[0]!.data as DelegationValidated;
    expect(validated).toMatchObject({ ok: false, failureClass: 'capability' });
    expect(validated.options).toHaveLength(3);
    const settled = of(records, 'tool.settled').find((record) => (record.data as { name: string }).name === 'delegate_task')!.data as { errorCode: string; observation: string };
    expect(settled.errorCode).toBe('Denied');
    expect(settled.observation).toMatch(/reassign.*ask the user.*postpone/s);
    expect(of(records, 'delegation.started')).toEqual([]);
  });

  it('in plan mode a worker child gets no tool that changes anything, and never a mode above its parent\'s', async () => {
    const { rein, store } = await setup({ root: [delegate([{ id: 'w', role: 'worker', objective: 'plan a change', tool_policy: { permission_mode: 'accept-edits' } }]), { text: 'Done.' }], w: [submit(validReport('patch-proposal', 'completed'))] }, { permissions: { mode: 'plan' } });
    const session = await rein.startSession({ task: 'delegate' });
    await finish(session);
    const records = await replayed(store, session);
    const started = of(records, 'delegation.started')[0]!.data as DelegationStarted;
    expect(started.task.permissionMode).toBe('plan');
    expect(started.task.tools).toEqual(['read', 'list_dir', 'glob', 'grep', 'read_artifact', 'update_plan']);
  });

  it('a child calling a tool outside its set is denied at the visibility stage and nothing changes', async () => {
    const { rein, store, workspace } = await setup({ root: [delegate([explorer('x')]), { text: 'Done.' }], x: [{ text: 'writing', calls: [{ name: 'write', arguments: { path: 'a.txt', content: 'changed' } }] }, submit(validReport('finding-report', 'partial'))] }, { permissions: { mode: 'accept-edits' } });
    const session = await rein.startSession({ task: 'delegate' });
    await finish(session);
    const records = await replayed(store, session);
    expect(of(records, 'tool.rejected').map((record) => record.data)).toMatchObject([{ name: 'write', stage: 'visibility', errorCode: 'Denied' }]);
    expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('alpha-secret-marker\n');
  });

  it('children cannot delegate further by default (depth limit 1)', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('x')]), { text: 'Done.' }], x: [delegate([explorer('y')]), submit(validReport('finding-report', 'partial'))] });
    const session = await rein.startSession({ task: 'delegate' });
    await finish(session);
    const records = await replayed(store, session);
    expect((of(records, 'delegation.started')[0]!.data as DelegationStarted).task.tools).not.toContain('delegate_task');
    expect(of(records, 'tool.rejected').map((record) => record.data)).toMatchObject([{ name: 'delegate_task', stage: 'visibility' }]);
    expect(of(records, 'delegation.started')).toHaveLength(1);
  });

  it('validation failures name the problem and start nothing', async () => {
    const { rein, store } = await setup({ root: [delegate([explorer('x'), explorer('x')]), delegate([explorer('y')], { policy: 'quorum' }), delegate([{ id: 'z', role: 'astronaut', objective: 'fly' }]), { text: 'Done.' }] });
    const session = await rein.startSession({ task: 'delegate' });
    await finish(session);
    const records = await replayed(store, session);
    expect(of(records, 'delegation.validated').map((record) => (record.data as DelegationValidated).failureClass)).toEqual(['validation', 'validation']);
    const settled = of(records, 'tool.settled').map((record) => record.data as { errorCode?: string; failedStage?: string });
    expect(settled.map((data) => [data.errorCode, data.failedStage])).toEqual([['InvalidInput', 'runtime-validation'], ['InvalidInput', 'runtime-validation'], ['InvalidInput', 'schema']]);
    expect(of(records, 'delegation.started')).toEqual([]);
  });
});
