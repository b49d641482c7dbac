import { spawn } from 'node:child_process';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ToolSettled } from '../../models/tool.records.js';
import { runScriptedSession } from 'rein/testing';
import { errnoFailures, osFailureOf } from '../../src/tools/os-errors.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { defineTool, readOnlyAnnotations } from '../../src/tools/tool.js';
import { makeTempDir } from '../support/temp-dir.js';
import { StoreError } from 'rein';
import { flattenRecords } from '../../src/host/step-record.js';

/** An error shaped as Node's fs layer throws it (the errnos this machine cannot produce for root are injected). */
const injected = (code: string, errno: number, syscall: string, path: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: injected, ${syscall} '${path}'`), { code, errno, syscall, path });

let workspace: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  workspace = await makeTempDir('rein-os-errors-');
  await writeFile(join(workspace.path, 'file.txt'), 'text\n');
  await mkdir(join(workspace.path, 'dir'));
});
afterEach(() => workspace.remove());

/**
 * One real file-system operation per errno where this process can cause it (as root, modes do not stop it, so
 * EACCES / EPERM / EROFS are injected); each is what a tool meets when the model asks for the wrong thing.
 */
const causes: Record<string, (root: string) => Promise<unknown>> = {
  EACCES: async (root) => {
    throw injected('EACCES', -13, 'open', join(root, 'locked.txt'));
  },
  EPERM: async (root) => {
    throw injected('EPERM', -1, 'unlink', join(root, 'file.txt'));
  },
  EROFS: async (root) => {
    throw injected('EROFS', -30, 'open', join(root, 'file.txt'));
  },
  ENOENT: (root) => open(join(root, 'missing.txt')),
  ENOTDIR: (root) => open(join(root, 'file.txt', 'inside.txt')),
  ENAMETOOLONG: (root) => open(join(root, 'n'.repeat(5_000)), 'w'),
  EISDIR: (root) => open(join(root, 'dir'), 'w'),
  E2BIG: async () => spawn('true', ['x'.repeat(200_000)]),
};

/** A tool that performs the cause named by its argument, at its execute or its prepare stage. */
const probe = (stage: 'execute' | 'prepare') =>
  defineTool({
    name: `fs_${stage}`,
    description: 'Touch the file system.',
    parameters: z.object({ errno: z.string() }).strict(),
    annotations: readOnlyAnnotations,
    risk: 'read',
    sideEffect: 'read',
    resumePolicy: 'rerun-after-check',
    ...(stage === 'prepare' ? { prepare: async (args: { errno: string }, context: { workspace: { root: string } }) => (await causes[args.errno]!(context.workspace.root), { ok: true as const, plan: undefined }) } : {}),
    execute: async (args, context) => (stage === 'execute' ? await causes[args.errno]!(context.workspace.root) : undefined, { ok: true, output: 'touched' }),
  });

const settledOf = (records: readonly RecordEnvelope[]) => flattenRecords(records).filter((record) => record.type === 'tool.settled').map((record) => record.data as ToolSettled);

describe('an operating-system error inside a tool is a model-visible failure', () => {
  const expected: Record<string, string> = { EACCES: 'Denied', EPERM: 'Denied', EROFS: 'Denied', ENOENT: 'NotFound', ENOTDIR: 'NotFound', ENAMETOOLONG: 'InvalidInput', EISDIR: 'InvalidInput', E2BIG: 'InvalidInput' };

  it('the table maps exactly the errnos the issue names', () => {
    expect(Object.fromEntries(Object.entries(errnoFailures).map(([errno, failure]) => [errno, failure.code]))).toEqual(expected);
  });

  for (const [errno, code] of Object.entries(expected)) {
    it(`${errno} → ${code}, at execution and at runtime validation; the session goes on and replays`, async () => {
      const run = await runScriptedSession({
        workspace: workspace.path,
        script: { turns: [{ text: 'Probing.', toolCalls: [{ name: 'fs_execute', arguments: { errno } }, { name: 'fs_prepare', arguments: { errno } }] }, { text: 'Read the errors.' }] },
        rein: { tools: [...builtinTools(), probe('execute'), probe('prepare')] },
      });
      expect(run.result.status).toBe('completed');
      const [executed, prepared] = settledOf(run.records);
      expect(executed).toMatchObject({ status: 'error', errorCode: code });
      expect(executed!.observation).toMatch(new RegExp(`^${code}: .*\\(${errno}`));
      expect(executed!.observation).not.toContain(workspace.path);
      expect(executed!.observation).not.toContain(`${errno}: ${errno}`);
      expect(prepared).toMatchObject({ status: 'error', errorCode: code, failedStage: 'runtime-validation' });
      expect(flattenRecords(run.records).find((record) => record.type === 'tool.rejected')?.data).toMatchObject({ stage: 'runtime-validation', code: errnoFailures[errno]!.reason });
      expect(flattenRecords(run.records).some((record) => record.type === 'effect.failed')).toBe(false);
      await run.rein.replaySession(run.session.id);
    });
  }

  it('a grep pattern or bash command too long for a process is InvalidInput, not a failure of rein', async () => {
    const huge = 'a'.repeat(200_000);
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: { turns: [{ text: 'Searching.', toolCalls: [{ name: 'grep', arguments: { pattern: huge } }, { name: 'bash', arguments: { command: `echo ${huge}` } }] }, { text: 'Too long.' }] },
      rein: { permissions: { approveAll: true }, sandbox: { loginShell: false } },
    });
    expect(run.result.status).toBe('completed');
    const [grep, bash] = settledOf(run.records);
    expect(grep).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
    expect(bash).toMatchObject({ status: 'error', errorCode: 'InvalidInput' });
    expect(grep!.observation).toContain('E2BIG');
    expect(flattenRecords(run.records).some((record) => record.type === 'effect.failed')).toBe(false);
  });

  it('an exception without an errno, or with one outside the table, is a ToolFailed the model reads, recorded with its class', async () => {
    expect(osFailureOf(new Error('boom'), { arguments: {} })).toBeUndefined();
    expect(osFailureOf(injected('EPIPE', -32, 'write', '/x'), { arguments: {} })).toBeUndefined();
    expect(osFailureOf(Object.assign(new Error('no errno'), { code: 'ENOENT' }), { arguments: {} })).toBeUndefined();
    expect(osFailureOf('a string', { arguments: {} })).toBeUndefined();
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: { turns: [{ text: 'Probing.', toolCalls: [{ name: 'fs_execute', arguments: { errno: 'EPIPE' } }] }, { text: 'Done.' }] },
      rein: { tools: [...builtinTools(), { ...probe('execute'), execute: async () => Promise.reject(injected('EPIPE', -32, 'write', '/x')) }] },
    });
    expect(run.result.status).toBe('completed');
    expect(settledOf(run.records)[0]).toMatchObject({ status: 'error', errorCode: 'ToolFailed', errorClass: 'Error', observation: expect.stringContaining('EPIPE: injected') });
    expect(run.records.some((record) => record.type === 'effect.failed')).toBe(false);
  });

  it('the store failing under a tool (a StoreError) still fails the session: the log cannot go on', async () => {
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: { turns: [{ text: 'Probing.', toolCalls: [{ name: 'fs_execute', arguments: { errno: 'EIO' } }] }, { text: 'Done.' }] },
      rein: { tools: [...builtinTools(), { ...probe('execute'), execute: async () => Promise.reject(new StoreError('STORE_IO', 'the disk went away')) }] },
    });
    expect(run.result.status).toBe('failed');
    expect(run.records.find((record) => record.type === 'effect.failed')?.data).toMatchObject({ error: { code: 'STORE_IO' } });
  });

  it('a NUL byte Node refuses is InvalidInput naming the field; in a bash command it is refused before anything runs', async () => {
    const refused = Object.assign(new TypeError("The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received 'a\\x00b'"), { code: 'ERR_INVALID_ARG_VALUE' });
    expect(osFailureOf(refused, { arguments: { path: 'a\u0000b', content: 'fine' } })).toMatchObject({ code: 'InvalidInput', reason: 'nul_byte', message: expect.stringContaining('`path` contains a NUL byte') });
    const run = await runScriptedSession({
      workspace: workspace.path,
      script: { turns: [{ text: 'Listing.', toolCalls: [{ name: 'bash', arguments: { command: 'ls\u0000 -la' } }, { name: 'write', arguments: { path: 'a\u0000b.txt', content: 'x' } }] }, { text: 'Done.' }] },
      rein: { permissions: { approveAll: true }, sandbox: { loginShell: false } },
    });
    expect(run.result.status).toBe('completed');
    const [bash, write] = settledOf(run.records);
    expect(bash).toMatchObject({ errorCode: 'InvalidInput', failedStage: 'runtime-validation', observation: 'InvalidInput: bash: `command` contains a NUL byte, which no file name or command can hold' });
    expect(write).toMatchObject({ errorCode: 'InvalidInput', observation: expect.stringContaining('`path` contains a NUL byte') });
    // Both are refused while being validated: the workspace boundary checks a path for NUL before any system call.
    expect(write).toMatchObject({ failedStage: 'runtime-validation' });
    expect(flattenRecords(run.records).filter((record) => record.type === 'tool.started')).toEqual([]);
    // The refused shell call never ran: no boundary evidence is owed, the turn reaches MutationReady.
    expect(flattenRecords(run.records).some((record) => record.type === 'turn.mutation-ready')).toBe(true);
  });
});
