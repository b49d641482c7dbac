import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { entriesOfRows, jsonLines, runCli, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { eventually, markedProcesses, newMarker, requireBubblewrap, requireWatchdog } from '../support/sandbox.js';
import { killStrayProcesses, runCommand, stopBackgroundCommands, sweepAfterSession } from '../../src/tools/process-runner.js';
import { defaultSandboxPolicy } from '../../src/policy/sandbox-policy.js';
import { prepareLaunch, type Launch } from '../../src/tools/command-launch.js';
import { processesMarked, processesOfSession } from '../../src/tools/process-tree.js';
import { commandWatchdog } from '../../src/tools/command-watchdog.js';
import { Workspace } from '../../src/tools/workspace.js';

const sandboxed = await requireBubblewrap();
const watched = requireWatchdog();
const ownPidNamespace = watched && (commandWatchdog().pidNamespace?.enforced === true || (() => {
  if (process.env.CI) throw new Error(`the fallback's pid namespace is required in CI: ${JSON.stringify(commandWatchdog().pidNamespace)}`);
  return false;
})());

/** Start `rein run` on a one-command script and resolve once the command's processes exist (found by the test's marker). */
const runUntilCommandRuns = async (workspace: string, command: string, marker: string, extra: string[] = []): Promise<{ child: ChildProcess; sessionId: () => string | undefined }> => {
  await writeFile(join(workspace, 'script.json'), JSON.stringify({ turns: [{ text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command } }] }, { text: 'Done.' }] }));
  const child = startCli(['run', 'run a long command', '--script', 'script.json', '--json', '--yes', ...extra], { cwd: workspace });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const running = await eventually(() => markedProcesses(marker), (pids) => pids.length > 0, 30_000);
  expect(running.length, 'the command started').toBeGreaterThan(0);
  return { child, sessionId: () => jsonLines(stdout).find((record) => typeof record.stream === 'string')?.stream as string | undefined };
};

const killed = (child: ChildProcess) => new Promise<void>((resolve) => {
  child.once('close', () => resolve());
  child.kill('SIGKILL');
});

/** SIGKILL what a failed test left behind. */
const killEach = (pids: readonly number[]) => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
};

describe('no command outlives rein', () => {
  it.runIf(sandboxed)('SIGKILL of rein during `sleep 1000` leaves no process of the call; resume --yes proves it and runs exactly one new copy', async () => {
    const workspace = await makeTempDir('rein-orphan-');
    try {
      const marker = newMarker();
      const { child, sessionId } = await runUntilCommandRuns(workspace.path, `export REIN_TEST_MARK=${marker}; sleep 1000`, marker);
      await killed(child);
      expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
      const id = sessionId();
      expect(id).toBeDefined();
      // Resume with --yes: the earlier run is provably gone, so the command runs again — once.
      const resumed = startCli(['resume', id!, '--json', '--yes'], { cwd: workspace.path });
      let stdout = '';
      resumed.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const copies = await eventually(() => markedProcesses(marker), (pids) => pids.length > 0, 30_000);
      expect(copies.length).toBe(1);
      const resolved = entriesOfRows(jsonLines(stdout)).find((record) => record.type === 'effect.resolved');
      expect(resolved?.data).toMatchObject({ resolution: 'rerun', reason: expect.stringContaining('no process of the earlier run is alive') });
      await killed(resumed);
      expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
    } finally {
      await workspace.remove();
    }
  });

  it.runIf(sandboxed)('SIGKILL of rein during `setsid … & disown` leaves nothing either', async () => {
    const workspace = await makeTempDir('rein-orphan-');
    try {
      const marker = newMarker();
      const { child } = await runUntilCommandRuns(workspace.path, `export REIN_TEST_MARK=${marker}; setsid sleep 1000 & disown; nohup sleep 1000 >/dev/null 2>&1 & sleep 1000`, marker);
      await eventually(() => markedProcesses(marker), (pids) => pids.length >= 3, 10_000);
      await killed(child);
      expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
    } finally {
      await workspace.remove();
    }
  });

  it.runIf(watched)('without the sandbox, SIGKILL of rein kills the command and all it started (setsid, nohup, env -i) with no resume; resume then finds nothing alive', async () => {
    const workspace = await makeTempDir('rein-orphan-off-');
    const marker = newMarker();
    try {
      // `env -i` drops REIN_CALL (and keeps only the test's mark), `setsid` leaves the process group: only the
      // watchdog, whose descendants they stay, ties them to rein.
      const command = `export REIN_TEST_MARK=${marker}; setsid sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & (env -i REIN_TEST_MARK=${marker} setsid sleep 1000 &); sleep 1000`;
      const { child, sessionId } = await runUntilCommandRuns(workspace.path, command, marker, ['--sandbox', 'off']);
      expect((await eventually(() => markedProcesses(marker), (pids) => pids.length >= 4, 30_000)).length).toBeGreaterThanOrEqual(4);
      await killed(child);
      expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
      const result = await runInProcess(['resume', sessionId()!, '--json', '--sandbox', 'off'], { cwd: workspace.path });
      expect(result.code).toBe(3);
      const resolved = entriesOfRows(jsonLines(result.stdout)).find((record) => record.type === 'effect.resolved');
      expect(resolved?.data).toMatchObject({ resolution: 'awaiting-confirmation', reason: expect.stringContaining('no process of the earlier run is alive') });
    } finally {
      killEach(markedProcesses(marker));
      await workspace.remove();
    }
  });

  it('a background command lives until its session ends, not after', async () => {
    const workspace = await makeTempDir('rein-background-');
    const store = createMemoryEventStore();
    try {
      const marker = newMarker();
      const script = { turns: [{ text: 'Starting a server.', toolCalls: [{ name: 'bash', arguments: { command: `export REIN_TEST_MARK=${marker}; sleep 1000`, run_in_background: true } }] }, { text: 'Done.' }] };
      let seenWhileRunning = 0;
      const rein = await createRein({ store, workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), permissions: { approveAll: true } });
      const session = await rein.createSession({ task: 'start it' });
      session.records$.subscribe((record) => {
        if (record.type === 'tool.settled') seenWhileRunning = markedProcesses(marker).length;
      });
      await session.send('start it');
      expect((await session.whenQuiet()).status).toBe('completed');
      expect(seenWhileRunning).toBeGreaterThan(0);
      expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
    } finally {
      await workspace.remove();
    }
  });

  it.runIf(watched)('without the sandbox a background command dies with a SIGKILLed rein, though its call had settled; resume still sweeps what carries the session\'s marker', async () => {
    const workspace = await makeTempDir('rein-orphan-bg-');
    const background = newMarker();
    const foreground = newMarker();
    const planted = newMarker();
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: 'Starting a ticker.', toolCalls: [{ name: 'bash', arguments: { command: `export REIN_TEST_MARK=${background}; (env -i REIN_TEST_MARK=${background} setsid sleep 1000 &); for i in $(seq 1 1000); do echo tick >> ticks.txt; sleep 1; done`, run_in_background: true } }] },
        { text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: `export REIN_TEST_MARK=${foreground}; sleep 1000` } }] },
        { text: 'Done.' },
      ] }));
      const child = startCli(['run', 'start a ticker', '--script', 'script.json', '--json', '--yes', '--sandbox', 'off'], { cwd: workspace.path });
      let stdout = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      // The background call has settled (the second call only starts after it) and the second one runs.
      expect((await eventually(() => markedProcesses(foreground), (pids) => pids.length > 0, 30_000)).length).toBeGreaterThan(0);
      // The ticker and the sleep it left under setsid (started in the background: on a loaded machine, a moment later).
      expect((await eventually(() => markedProcesses(background), (pids) => pids.length >= 2, 30_000)).length).toBeGreaterThanOrEqual(2);
      await killed(child);
      const id = jsonLines(stdout).find((record) => typeof record.stream === 'string')?.stream as string;
      // No resume: the watchdogs saw rein die and killed everything below them.
      expect(await eventually(() => [...markedProcesses(background), ...markedProcesses(foreground)], (pids) => pids.length === 0)).toEqual([]);
      expect(await eventually(() => processesOfSession(id), (found) => found.length === 0), 'no watchdog outlives its command').toEqual([]);
      // What a process of the session could still have left (its watchdog killed with it): resume kills it by marker.
      const stray = spawn('sleep', ['1000'], { env: { ...process.env, REIN_CALL: `${id}:root:e9.0`, REIN_TEST_MARK: planted }, detached: true, stdio: 'ignore' });
      stray.unref();
      expect((await eventually(() => markedProcesses(planted), (pids) => pids.length > 0)).length).toBe(1);
      const result = await runInProcess(['resume', id, '--json', '--sandbox', 'off'], { cwd: workspace.path });
      expect(result.code).toBe(3);
      const resumed = entriesOfRows(jsonLines(result.stdout)).find((record) => record.type === 'session.resumed');
      expect(resumed?.data.strayProcessesKilled).toBe(1);
      expect(markedProcesses(planted)).toEqual([]);
      const human = await runInProcess(['show', id], { cwd: workspace.path });
      expect(human.stdout).toMatch(/killed 1 process\(es\) an earlier run left/);
    } finally {
      killEach([...markedProcesses(background), ...markedProcesses(foreground), ...markedProcesses(planted)]);
      await workspace.remove();
    }
  });

  it.runIf(ownPidNamespace)('without the sandbox a background command is stopped at its timeout_ms, with what it started under env -i and setsid, and the result says when', async () => {
    const workspace = await makeTempDir('rein-background-timeout-');
    const marker = newMarker();
    try {
      const script = { turns: [
        // The command runs in a pid namespace of its own: the watchdog's pid (as /proc, the host's, names it) is the
        // parent of the namespace's init, the shell's parent.
        { text: 'Starting.', toolCalls: [{ name: 'bash', arguments: { command: `(env -i REIN_TEST_MARK=${marker} setsid sleep 1000 &); read -r self rest < /proc/self/stat; init=$(cut -d' ' -f4 /proc/$self/stat); cut -d' ' -f4 /proc/$init/stat > watchdog.pid; export REIN_TEST_MARK=${marker}; exec sleep 1000`, run_in_background: true, timeout_ms: 1500 } }] },
        // Waits (event-driven, inside the session, in another pid namespace: by /proc) until both processes and their
        // watchdog are gone (and rein has reaped it, so its end is recorded); its own timeout is generous.
        { text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: `while grep -qs 'REIN_TEST_MARK=${marker}' /proc/[0-9]*/environ || [ -e /proc/$(cat watchdog.pid) ]; do sleep 0.05; done; echo gone`, timeout_ms: 120_000 } }] },
        { text: 'Done.' },
      ] };
      const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), permissions: { approveAll: true }, sandbox: { mode: 'off' } });
      const session = await rein.createSession({ task: 'start it' });
      const settled: Array<Record<string, any>> = [];
      const ended: Array<Record<string, any>> = [];
      session.records$.subscribe((record) => {
        if (record.type === 'tool.settled') settled.push(record.data as Record<string, any>);
        if (record.type === 'command.ended') ended.push({ ...(record.data as Record<string, any>), before: settled.length });
      });
      await session.send('start it');
      expect((await session.whenQuiet()).status).toBe('completed');
      const [started, waited] = settled;
      expect(JSON.parse(started!.observation)).toMatchObject({ background: true, timeout_ms: 1500, message: expect.stringContaining('at its timeout of 1500 ms'), sandbox: { enforcement: 'fallback', lifetime: expect.stringContaining('enforced (watchdog') } });
      expect(waited!.execution).toMatchObject({ exitCode: 0 });
      // Its end is recorded: stopped at its timeout by SIGTERM (its processes die of it), before the wait settled.
      expect(ended).toEqual([expect.objectContaining({ callId: started!.callId, ended: 'timeout', timedOut: 'soft', exitCode: null, signal: 'SIGTERM', timeoutMs: 1500, pid: JSON.parse(started!.observation).pid, before: 1 })]);
      expect(JSON.parse(waited!.observation).stdout).toBe('gone\n');
      expect(markedProcesses(marker)).toEqual([]);
      expect(await eventually(() => processesOfSession(session.id), (found) => found.length === 0)).toEqual([]);
    } finally {
      killEach(markedProcesses(marker));
      await workspace.remove();
    }
  });

  it.runIf(ownPidNamespace)('without the sandbox a command that kills its own watchdog (kill -9 $PPID) cannot: what it started under env -i and setsid dies with the call, through the CLI', async () => {
    const workspace = await makeTempDir('rein-watchdog-kill-');
    const marker = newMarker();
    try {
      // Trial 6 F15: the command killed its watchdog, and its `env -i setsid` child outlived the call, the session and rein.
      const command = `env -i REIN_TEST_MARK=${marker} setsid /bin/sh -c 'sleep 1000' </dev/null >/dev/null 2>&1 & sleep 0.3; kill -9 $PPID; echo "killed: $?"`;
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command } }] }, { text: 'Done.' }] }));
      const run = await runCli(['run', 'run it', '--script', 'script.json', '--json', '--yes', '--sandbox', 'off'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(0);
      const settled = entriesOfRows(jsonLines(run.stdout)).find((record) => record.type === 'tool.settled')?.data as Record<string, any> | undefined;
      // The kill did not reach the watchdog (it has no pid in the command's namespace); the call ended normally.
      expect(settled?.execution).toMatchObject({ exitCode: 0 });
      expect(JSON.parse(settled!.observation)).toMatchObject({ sandbox: { enforcement: 'fallback', lifetime: expect.stringContaining('enforced (watchdog') } });
      // rein has exited: nothing the command started is left.
      expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0, 3_000)).toEqual([]);
    } finally {
      killEach(markedProcesses(marker));
      await workspace.remove();
    }
  });

  it.runIf(watched)('without the sandbox what a command started under env -i and setsid dies when the command exits, times out or is cancelled', async () => {
    const policy = { ...defaultSandboxPolicy, mode: 'off' as const, killGraceMs: 200 };
    const workspace = await makeTempDir('rein-watchdog-');
    try {
      const ws = await Workspace.open(workspace.path);
      for (const [label, command, options] of [
        ['exits', 'echo started', {}],
        ['times out', 'echo started; sleep 1000', { timeoutMs: 500 }],
        ['is cancelled', 'echo started; sleep 1000', { cancel: true }],
      ] as const) {
        const marker = newMarker();
        // Every process ignores SIGTERM, so the hard timeout's SIGKILL is what stops them.
        const launch = await prepareLaunch({ command: `trap "" TERM; (env -i REIN_TEST_MARK=${marker} setsid sleep 1000 &); (env -i REIN_TEST_MARK=${marker} nohup sleep 1000 >/dev/null 2>&1 &); ${command}`, cwd: ws.root, policy, workspace: ws, marker: `s-${marker}:root:e1.0` });
        if ('refused' in launch) throw new Error(launch.refused);
        expect(launch.watchdog).toBe(true);
        const abort = new AbortController();
        const running = runCommand({ launch, cwd: ws.root, timeoutMs: 'timeoutMs' in options ? options.timeoutMs : 60_000, policy, signal: abort.signal, onOutput: () => {
          if ('cancel' in options) abort.abort();
        } });
        const outcome = await running;
        expect(outcome.stdout.bytes.toString(), label).toBe('started\n');
        expect(markedProcesses(marker), label).toEqual([]);
        expect(processesMarked(`s-${marker}:root:e1.0`), `${label}: no watchdog is left`).toEqual([]);
      }
    } finally {
      await workspace.remove();
    }
  });

  it('a session\'s end kills a process carrying its marker that no command of this process accounts for', async () => {
    const workspace = await makeTempDir('rein-stray-');
    const marker = newMarker();
    try {
      // The session runs a command here, so its end looks for strays (a session created by this process that ran no
      // command skips the sweep: nothing can carry its marker; see sweepAfterSession and the test below).
      const script = { turns: [{ text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }, { text: 'Done.' }] };
      const rein = await createRein({ store: createMemoryEventStore(), workspace: workspace.path, provider: createScriptedProvider(parseScript(script)), permissions: { approveAll: true } });
      const session = await rein.createSession({ task: 'nothing' });
      // What a command could leave that escaped its process group: a real process with the session's call marker.
      const stray = spawn('sleep', ['1000'], { env: { ...process.env, REIN_CALL: `${session.id}:root:e9.0`, REIN_TEST_MARK: marker }, detached: true, stdio: 'ignore' });
      stray.unref();
      expect((await eventually(() => markedProcesses(marker), (pids) => pids.length > 0)).length).toBe(1);
      await session.send('nothing');
      expect((await session.whenQuiet()).status).toBe('completed');
      expect(await eventually(() => markedProcesses(marker), (pids) => pids.length === 0)).toEqual([]);
    } finally {
      killEach(markedProcesses(marker));
      await workspace.remove();
    }
  });

  it('the sweep spares the commands this process runs and kills only the session\'s strays', async () => {
    const session = `s-sweep-${newMarker()}`;
    const own = newMarker();
    const other = newMarker();
    const launch: Launch = {
      argv: ['/bin/bash', '-c', 'sleep 1000'],
      env: { PATH: process.env.PATH, REIN_CALL: `${session}:root:e1.0`, REIN_TEST_MARK: own },
      shell: '/bin/bash',
      sandbox: { enforcement: 'fallback', reason: 'test' },
      enforcement: { filesystem: { enforced: false, reason: 'test' }, network: { enforced: false, reason: 'test' }, processes: { enforced: false, reason: 'test' }, memory: { enforced: false, reason: 'test' }, lifetime: { enforced: false, reason: 'test' }, user: { enforced: false, reason: 'test' }, kernel: { enforced: false, reason: 'test' }, tmp: { enforced: false, reason: 'test' } },
    };
    const outcome = await runCommand({ launch, cwd: process.cwd(), timeoutMs: 60_000, policy: { ...defaultSandboxPolicy, mode: 'off' }, signal: new AbortController().signal, sessionId: session, detachAfterMs: 100 });
    expect(outcome.background).toBe(true);
    const strays = [`${session}:root:e2.0`, `${session}-other:root:e1.0`].map((call) => {
      const child = spawn('sleep', ['1000'], { env: { ...process.env, REIN_CALL: call, REIN_TEST_MARK: other }, detached: true, stdio: 'ignore' });
      child.unref();
      return child.pid!;
    });
    try {
      expect((await eventually(() => markedProcesses(other), (pids) => pids.length === 2)).length).toBe(2);
      expect(await killStrayProcesses(session)).toEqual([strays[0]]);
      // The same session's other call is gone; a session whose id merely starts with this one's is not touched.
      expect(markedProcesses(other)).toEqual([strays[1]]);
      expect(markedProcesses(own).length).toBeGreaterThan(0);
    } finally {
      stopBackgroundCommands(session, 'session-end');
      killEach(strays);
    }
    expect(await eventually(() => markedProcesses(own), (pids) => pids.length === 0)).toEqual([]);
  });

  it('a session\'s end looks for strays only when a process can carry its marker: created elsewhere, or a command ran here', async () => {
    const session = `s-skip-${newMarker()}`;
    // Created here, no command started for it: no process can carry its marker.
    expect(sweepAfterSession(session, true)).toBe(false);
    // Created (or run) by another process before: what that process left is looked for.
    expect(sweepAfterSession(session, false)).toBe(true);
    const launch: Launch = {
      argv: ['/bin/true'],
      env: { PATH: process.env.PATH, REIN_CALL: `${session}:root:e1.0` },
      shell: '/bin/bash',
      sandbox: { enforcement: 'fallback', reason: 'test' },
      enforcement: { filesystem: { enforced: false, reason: 'test' }, network: { enforced: false, reason: 'test' }, processes: { enforced: false, reason: 'test' }, memory: { enforced: false, reason: 'test' }, lifetime: { enforced: false, reason: 'test' }, user: { enforced: false, reason: 'test' }, kernel: { enforced: false, reason: 'test' }, tmp: { enforced: false, reason: 'test' } },
    };
    await runCommand({ launch, cwd: process.cwd(), timeoutMs: 60_000, policy: { ...defaultSandboxPolicy, mode: 'off' }, signal: new AbortController().signal, sessionId: session });
    // A command of the session ran here (it may have left something behind): swept, once; a session whose id merely
    // starts with this one's is not concerned.
    expect(sweepAfterSession(`${session}-other`, true)).toBe(false);
    expect(sweepAfterSession(session, true)).toBe(true);
    expect(sweepAfterSession(session, true)).toBe(false);
  });

  it('resume removes the temp files of an interrupted write and records it', async () => {
    const workspace = await makeTempDir('rein-temp-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'a.txt', content: 'new\n' } }] }, { text: 'Done.' }] }));
      // The write is interrupted between its durable intent and its result: the tool never settles.
      const first = await runInProcess(['run', 'write a file', '--script', 'script.json', '--json', '--yes'], { cwd: workspace.path });
      expect(first.code).toBe(0);
      const ran = jsonLines(first.stdout)[0]!.stream as string;
      const store = await openLevelEventStore(join(workspace.path, '.rein'));
      const records = await store.read(ran);
      const cut = records.find((record) => record.type === 'tool.started')!;
      // The log as it was when rein died mid-write (up to and including tool.started), in the same store so the blobs
      // its records name (the model input, the workspace manifest) are there as they would be; with its temp file.
      const id = `${ran}-crashed`;
      await store.fork(ran, cut.seq, { newStream: id });
      await store.close();
      await rm(join(workspace.path, 'a.txt'));
      await writeFile(join(workspace.path, '.a.txt.rein-0123456789ab.tmp'), 'ne');
      await writeFile(join(workspace.path, '.a.txt.rein-keep.tmp'), 'not ours by name');
      const resumed = await runInProcess(['resume', id, '--json', '--yes'], { cwd: workspace.path });
      expect(resumed.code, resumed.stderr).toBe(0);
      const cleaned = entriesOfRows(jsonLines(resumed.stdout)).find((record) => record.type === 'workspace.cleaned');
      expect(cleaned?.data).toMatchObject({ paths: ['.a.txt.rein-0123456789ab.tmp'], reason: 'interrupted-write' });
      expect((await readdir(workspace.path)).filter((name) => name.endsWith('.tmp'))).toEqual(['.a.txt.rein-keep.tmp']);
      expect(await readFile(join(workspace.path, 'a.txt'), 'utf8')).toBe('new\n');
    } finally {
      await workspace.remove();
    }
  });
});
