import type { Command } from 'commander';
import { addCommonOptions } from '../command-options.js';
import { defaultInspectorUrl, type InspectOptions } from './inspect.flags.js';

/**
 * `rein inspect <id>`: replay a recorded session through fresh actors and stream every actor, event and snapshot
 * to a Stately inspector on this machine (`--url`, default ws://127.0.0.1:8080), or with `--serve [port]` start a
 * local relay (127.0.0.1 only) that serves the inspector page and keep it open until Ctrl-C. Without an id,
 * `--serve` only starts the relay, for `rein run --inspect` to stream a live session to. Read-only.
 */
export const registerInspect = (program: Command): void => {
  const command = program
    .command('inspect')
    .description('stream a recorded session to the Stately inspector (on this machine only); with --serve and no id, start a relay for rein run --inspect')
    .argument('[id]', 'session id (none with --serve: the relay waits for rein run --inspect)')
    .option('--url <ws-url>', `the inspector WebSocket (default ${defaultInspectorUrl})`)
    .option('--serve [port]', 'start a local inspector relay on 127.0.0.1 (default port 8080) and keep it open');
  addCommonOptions(command)
    .addHelpText('after', '\nExamples:\n  rein inspect s-20261129-081406-98add6             replay a session into an inspector at ws://127.0.0.1:8080\n  rein inspect --serve                              start a relay and its page; then, in another terminal:\n  rein run "fix the test" --inspect                 stream the live actors to it\n')
    .action(async (id: string | undefined, options: InspectOptions) => (await import('./inspect.action.js')).inspectCommand(id, options));
};
