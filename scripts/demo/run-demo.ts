import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLevelEventStore } from '../../stores/index.js';
import { LiveRenderer } from '../../src/cli/live-renderer.js';
import { createScriptedProvider, loadScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { printSandbox } from '../../src/cli/session-runner.js';
import { rebuildTraceView } from '../../src/projections/rebuild.js';
import { blobText } from '../../src/session/session-records.js';
import { analyzeTrace } from '../../src/trace/trace-analyzer.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import { shellWord } from '../../src/util/shell-word.js';

const demoDirectory = fileURLToPath(new URL('../../../scripts/demo/', import.meta.url));

const runTests = (workspace: string): boolean => {
  const result = spawnSync(process.execPath, ['--test'], { cwd: workspace, encoding: 'utf8' });
  const summary = `${result.stdout}`.split('\n').filter((line) => /^# (pass|fail)/.test(line));
  process.stdout.write(`  ${summary.join(' · ') || 'no test summary'}\n`);
  return result.status === 0;
};

/**
 * `npm start`: copy the sample project, show its failing test, let a scripted agent run the tests, read the test
 * and the code, fix it with an exact edit and run the tests again (the demo answers the approval requests as a host
 * app would), show the test passing, then verify the session by replay. Both test runs are verifications recorded
 * from their exit codes — the first failed, the second passed — and the trace judges the outcome from them.
 */
/**
 * Where the demo's project goes: the directory named on the command line (`npm start -- demo`), which must be new or
 * empty so the demo never writes over a person's files, else a fresh temporary directory.
 */
const demoWorkspace = async (named: string | undefined): Promise<string> => {
  if (named === undefined) return mkdtemp(join(tmpdir(), 'rein-demo-'));
  const workspace = resolve(named);
  const entries = await readdir(workspace).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (entries.length > 0) {
    process.stderr.write(`rein demo: USAGE: ${workspace} is not empty; name a new directory (npm start -- <dir>)\n`);
    process.exit(2);
  }
  await mkdir(workspace, { recursive: true });
  return workspace;
};

const main = async (): Promise<void> => {
  const workspace = await demoWorkspace(process.argv[2]);
  await cp(join(demoDirectory, 'sample-project'), workspace, { recursive: true });
  process.stdout.write(`rein demo — workspace ${workspace}\n\nbefore the agent, node --test:\n`);
  runTests(workspace);

  const scriptPath = join(demoDirectory, 'fix-failing-test.script.json');
  const store = await openLevelEventStore(join(workspace, '.rein'));
  try {
    const rein = await createRein({ store, workspace, provider: createScriptedProvider(await loadScript(scriptPath), { source: scriptPath }) });
    const task = 'The tests fail. Find out why and fix the code.';
    const session = await rein.createSession({ task });
    // Its follow-up commands name the demo's workspace: they are run from elsewhere (the clone's root).
    const renderer = new LiveRenderer(process.stdout, { where: ` --workspace ${shellWord(workspace)}` });
    const subscription = renderer.attach(session);
    // The demo plays the host app: it answers each approval request (edits and commands ask in default mode).
    subscription.add(session.approvals$.subscribe((request) => void session.approve(request.approvalId, { decision: 'allow-once' })));
    const startedAt = Date.now();
    process.stdout.write(`\nagent (scripted model), task: ${task}\n`);
    await printSandbox(store, session.id);
    process.stdout.write('\n');
    await session.send(task);
    let result = await session.whenQuiet();
    while (result.status === 'paused' && session.pendingApprovals().length > 0) result = await session.whenQuiet();
    subscription.unsubscribe();
    const records = await store.read(session.id);
    process.stdout.write(renderer.summary(result, startedAt, records));

    process.stdout.write('\nafter the agent, node --test:\n');
    const passing = runTests(workspace);

    const replay = await rein.replaySession(session.id);
    process.stdout.write(`\nreplay: verified ${replay.verified} records (${replay.inputs} inputs re-applied, ${replay.regenerated} derived records regenerated and equal)\n`);
    // Each run of the suite is a verification whose status is its exit code: red first, green after the fix.
    const verifications = records.filter((record) => record.type === 'verification.recorded').map((record) => ({ seq: record.seq, ...(record.data as VerificationRecorded) }));
    process.stdout.write(`verifications: ${verifications.map((entry) => `#${entry.seq} ${entry.command ?? entry.name} ${entry.status} (exit ${String(entry.exitCode)})`).join(' · ')}\n`);
    const trace = await analyzeTrace(rebuildTraceView(records), blobText(store, session.id));
    process.stdout.write(`trace: outcome ${trace.outcome}${trace.primary ? ` — ${trace.primary.type} at the ${trace.primary.boundary} boundary${trace.primary.type === 'missing_verification' ? ' (the agent claimed success without running the tests)' : ''}` : ''}\n`);
    process.stdout.write(`\ninspect it: npx rein show ${session.id} --workspace ${workspace} (also: trace, context --turn 2, replay, ui)\n`);
    const truthful = verifications.map((entry) => entry.status).join(',') === 'failed,passed' && trace.outcome === 'succeeded';
    if (result.status !== 'completed' || !passing || !truthful) process.exitCode = 1;
  } finally {
    await store.close();
  }
};

await main();
