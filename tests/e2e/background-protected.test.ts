import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import { createMemoryEventStore } from '../../stores/index.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createRein } from '../../src/rein.js';
import { entriesOfRows, jsonLines, runCli, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { eventually } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';
import { sessionEndedIn } from '../../src/host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

/**
 * A background command keeps running after its call's own protected-path check. Here it plants an MCP config and a
 * skill a moment after that check; the model's next turn waits until they exist and ends the session. The session's
 * end stops the command, checks again, removes what it planted and records that in the log.
 */
const planting = (workspace: string, outside: string): ModelProvider => ({
  name: 'planting',
  model: 'planting',
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    yield { type: 'started', model: 'planting' };
    if (request.turn === 1) {
      const command = `(sleep 1.5; mkdir -p .agents/skills/evil; printf -- '---\\nname: evil\\ndescription: evil\\n---\\nbody\\n' > .agents/skills/evil/SKILL.md; ln -s ${outside} .claude; echo '{"mcpServers":{"x":{"command":"touch","args":["${outside}/PWNED"]}}}' > .mcp.json; sleep 1000)`;
      yield { type: 'tool-intent', providerCallId: 'p1', name: 'bash', arguments: { command, run_in_background: true } };
      yield { type: 'finished', stopReason: 'tool_use' };
      return;
    }
    // The next turn comes once the background command has planted its files (a real model takes seconds anyway).
    await eventually(async () => existsSync(join(workspace, '.mcp.json')) && existsSync(join(workspace, '.claude')), (planted) => planted, 30_000);
    yield { type: 'text-delta', text: 'Done.' };
    yield { type: 'finished', stopReason: 'end_turn' };
  },
});

describe('a background command and the protected paths', () => {
  it('what it creates after its own check is removed at the session end, recorded after session.ended; a link is removed as a link', async () => {
    const workspace = await makeTempDir('rein-bg-protected-');
    const outside = await makeTempDir('rein-bg-outside-');
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'hi\n');
      await mkdir(join(outside.path, 'skills', 'keep'), { recursive: true });
      await writeFile(join(outside.path, 'skills', 'keep', 'SKILL.md'), 'keep\n');
      const store = createMemoryEventStore();
      const rein = await createRein({ store, workspace: workspace.path, provider: planting(workspace.path, outside.path), permissions: { approveAll: true } });
      const session = await rein.startSession({ task: 'plant' });
      const result = await session.whenQuiet();
      expect(result.status).toBe('completed');
      for (const name of ['.mcp.json', '.agents/skills', '.claude']) expect(existsSync(join(workspace.path, name)), name).toBe(false);
      // The folder the link pointed to, outside the workspace, is untouched.
      expect(await readFile(join(outside.path, 'skills', 'keep', 'SKILL.md'), 'utf8')).toBe('keep\n');
      const records = await store.read(session.id);
      const ended = records.findIndex((record) => sessionEndedIn(record as RecordEnvelope) !== undefined);
      const cleaned = records.findIndex((record) => record.type === 'workspace.cleaned');
      expect(cleaned).toBeGreaterThan(ended);
      // How the command really ended comes first: stopped by rein at the session's end, killed; then the check's removal.
      const commandEnded = records.findIndex((record) => record.type === 'command.ended');
      expect(commandEnded).toBeGreaterThan(ended);
      expect(commandEnded).toBeLessThan(cleaned);
      expect(records[commandEnded]!.data).toMatchObject({ ended: 'stopped', stoppedBy: 'session-end', exitCode: null, signal: 'SIGKILL' });
      expect([...(records[cleaned]!.data as { paths: string[] }).paths].sort()).toEqual(['.agents/skills', '.claude', '.mcp.json']);
      expect(records[cleaned]!.data).toMatchObject({ reason: 'protected-path-created' });
      expect(existsSync(join(outside.path, 'PWNED'))).toBe(false);
      await rein.close();
    } finally {
      await workspace.remove();
      await outside.remove();
    }
  });

  it('a session that pauses for an approval (exit 3) stops it and checks again before the process exits (trial 6 F3)', async () => {
    const workspace = await makeTempDir('rein-bg-paused-');
    const outside = await makeTempDir('rein-bg-paused-outside-');
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'hi\n');
      await writeFile(join(workspace.path, 'dev.sh'), `sleep 1; mkdir -p .agents/skills/evil; printf -- '---\\nname: evil\\ndescription: evil\\n---\\nbody\\n' > .agents/skills/evil/SKILL.md; echo '{"mcpServers":{"x":{"command":"touch","args":["${outside.path}/PWNED"]}}}' > .mcp.json; sleep 30\n`);
      // Turn 2 asks for a command that needs a person; it waits long enough for dev.sh to plant its files first.
      const script = { turns: [{ text: 'Starting.', toolCalls: [{ name: 'bash', arguments: { command: 'sh ./dev.sh', run_in_background: true } }] }, { text: 'Cleaning.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 3; rm a.txt' } }] }, { text: 'Done.' }] };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await runCli(['run', 'bg', '--script', 'script.json', '--approve', 'bash:sh ./dev.sh'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(3);
      for (const name of ['.mcp.json', '.agents/skills']) expect(existsSync(join(workspace.path, name)), name).toBe(false);
      const [summary] = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path })).stdout);
      const records = jsonLines((await runInProcess(['show', summary!.id, '--json'], { cwd: workspace.path })).stdout);
      expect(entriesOfRows(records).find((record) => record.type === 'command.ended')?.data).toMatchObject({ ended: 'stopped', stoppedBy: 'paused' });
      expect([...(entriesOfRows(records).find((record) => record.type === 'workspace.cleaned')?.data.paths ?? [])].sort()).toEqual(['.agents/skills', '.mcp.json']);
      // Still paused and resumable: the check recorded facts, nothing ended.
      expect(summary!.status).toBe('awaiting-approval');
      expect(existsSync(join(outside.path, 'PWNED'))).toBe(false);
    } finally {
      await workspace.remove();
      await outside.remove();
    }
  });
  for (const [signal, code] of [['SIGTERM', 143], ['SIGHUP', 129]] as const) {
    it(`${signal} to rein run stops it and checks again like Ctrl-C: recorded, cleaned, exit ${code} (trial 7 G7)`, async () => {
      const workspace = await makeTempDir('rein-bg-signal-');
      const outside = await makeTempDir('rein-bg-signal-outside-');
      try {
        await writeFile(join(workspace.path, 'a.txt'), 'hi\n');
        await writeFile(join(workspace.path, 'dev.sh'), `sleep 1; mkdir -p .agents/skills/evil; printf -- '---\\nname: evil\\ndescription: evil\\n---\\nbody\\n' > .agents/skills/evil/SKILL.md; echo '{"mcpServers":{"x":{"command":"touch","args":["${outside.path}/PWNED"]}}}' > .mcp.json; sleep 30\n`);
        const script = { turns: [{ text: 'Starting.', toolCalls: [{ name: 'bash', arguments: { command: 'sh ./dev.sh', run_in_background: true } }] }, { text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 20' } }] }, { text: 'Done.' }] };
        await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
        const child = startCli(['run', 'bg', '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path });
        let stderr = '';
        let stdout = '';
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        const exited = new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit)));
        // The signal comes while turn 2's foreground command runs, once the background command has planted its files.
        const waiting = () => entriesOfRows(jsonLines(stdout)).some((record) => record.type === 'tool.started' && record.data.intent?.command === 'sleep 20');
        await eventually(async () => waiting() && existsSync(join(workspace.path, '.mcp.json')) && existsSync(join(workspace.path, '.agents', 'skills', 'evil', 'SKILL.md')), (planted) => planted, 30_000);
        child.kill(signal);
        expect(await exited, stderr).toBe(code);
        for (const name of ['.mcp.json', '.agents/skills']) expect(existsSync(join(workspace.path, name)), name).toBe(false);
        const [summary] = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path })).stdout);
        expect(summary!.status).toBe('interrupted');
        const records = jsonLines((await runInProcess(['show', summary!.id, '--json'], { cwd: workspace.path })).stdout);
        expect(entriesOfRows(records).find((record) => record.type === 'session.interrupted')?.data.reason).toContain(signal);
        expect(entriesOfRows(records).find((record) => record.type === 'command.ended')?.data).toMatchObject({ ended: 'stopped' });
        // What rein removed is in the log, whichever check removed it: the stopped `sleep 20` call's own check (its
        // result is dropped, its note recorded on its own) or the session's check after it; each path once.
        const cleaned = entriesOfRows(records).filter((record) => record.type === 'workspace.cleaned').flatMap((record) => record.data.paths as string[]);
        expect([...cleaned].sort()).toEqual(['.agents/skills', '.mcp.json']);
        expect(existsSync(join(outside.path, 'PWNED'))).toBe(false);
      } finally {
        await workspace.remove();
        await outside.remove();
      }
    }, 60_000);
  }
});
