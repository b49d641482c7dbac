import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { flattenRecords } from '../../src/host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

/** The `rein` binary as it ships: the bundled CLI (`npm test` builds and bundles before running tests). */
export const cliPath = fileURLToPath(new URL('../../dist/cli/rein.js', import.meta.url));

/** The same CLI unbundled (tsc's output), for tests about which modules a command loads. */
export const libraryCliPath = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** The scripted session the CLI tests run: list the workspace, read hello.txt, write its greeting in capitals to out.txt, answer. */
export const greetingScript = {
  turns: [
    { text: 'Looking around.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'hello.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'HELLO\n' } }] },
    { text: 'Done: out.txt holds the greeting in capitals.' },
  ],
};

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run `rein <args>` as a user would, in `cwd`, and collect its output. */
export const runCli = (args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string } = { cwd: process.cwd() }): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });

/** Start `rein <args>` without waiting for it. */
export const startCli = (args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): ChildProcess =>
  spawn(process.execPath, [cliPath, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });

/** Parse the JSON lines a `--json` command printed (a torn last line is ignored). */
export const jsonLines = (text: string): Array<Record<string, any>> =>
  text.split('\n').flatMap((line) => {
    if (!line.trim()) return [];
    try {
      return [JSON.parse(line) as Record<string, any>];
    } catch {
      return [];
    }
  });

/**
 * Records (stored, or printed by `--json`) as the records they stand for, in log order: a step record's folded facts
 * and derived entries (`flattenRecords`), for tests that look for a transition, an intent, a witness or `session.ended`.
 */
export const entriesOfRows = <T>(rows: readonly T[]): T[] => flattenRecords(rows as unknown as RecordEnvelope[]) as unknown as T[];
