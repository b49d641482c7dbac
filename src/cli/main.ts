#!/usr/bin/env node
import { outputClosed } from './output-closed.js';
import { runCommandLine } from './command-line.js';

const main = async (): Promise<void> => {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    // A session that runs is interrupted and recorded as such; the writes that follow fail quietly.
    if (outputClosed()) return;
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  // stderr's reader gone too (`rein run … 2>&1 | head`): a running session is interrupted the same way; otherwise the
  // messages nobody reads are dropped — never an uncaught error that ends the process with 1 and the session unrecorded.
  process.stderr.on('error', () => {
    outputClosed();
  });
  process.exitCode = await runCommandLine(process.argv);
};

await main();
// The command is done and has closed what it opened. Whatever a plugin left running (a timer, a pool, a watcher) must
// not keep the process, and the exit code with it, from its caller: once stdout has drained, a timer that does not
// itself hold the process ends it after a grace second if nothing else did.
process.stdout.write('', () => setTimeout(() => process.exit(), 1_000).unref());
