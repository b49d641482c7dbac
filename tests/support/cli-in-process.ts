import { runCommandLine } from '../../src/cli/command-line.js';

/** What one in-process `rein` command printed and its exit code. */
export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

let running = false;

/**
 * Run `rein <args>` inside this test process (no child process, no bundle): the same command-line code the binary
 * runs (`runCommandLine`), with stdout and stderr captured, in `cwd` (the process's directory is changed for the
 * command and put back) and with `env` set for its duration. One command at a time. For behaviour where the process
 * boundary itself is not what is tested: exit codes, printed lines, what is recorded.
 */
export const runInProcess = async (args: readonly string[], options: { cwd: string; env?: Record<string, string | undefined> }): Promise<InProcessResult> => {
  if (running) throw new Error('runInProcess: one command at a time');
  running = true;
  const out = { stdout: '', stderr: '' };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (stream: 'stdout' | 'stderr') =>
    function (this: unknown, chunk: string | Uint8Array, ...rest: unknown[]): boolean {
      out[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const callback = rest.find((item): item is () => void => typeof item === 'function');
      if (callback) queueMicrotask(callback);
      return true;
    };
  const savedEnv = new Map<string, string | undefined>();
  for (const [key, value] of Object.entries(options.env ?? {})) {
    savedEnv.set(key, process.env[key]);
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  const cwd = process.cwd();
  process.chdir(options.cwd);
  process.stdout.write = capture('stdout') as typeof process.stdout.write;
  process.stderr.write = capture('stderr') as typeof process.stderr.write;
  try {
    const code = await runCommandLine(['node', 'rein', ...args]);
    return { code, ...out };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    process.chdir(cwd);
    for (const [key, value] of savedEnv) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    running = false;
  }
};
