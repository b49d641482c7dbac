import type { Command } from 'commander';
import { addCapabilityOptions, addCommonOptions, addPermissionOptions, addPluginOptions, addProviderOptions, type CommonOptions } from '../command-options.js';
import type { ServeOptions } from './serve.flags.js';

const serveOptions = (command: Command): Command =>
  addCapabilityOptions(
    addPluginOptions(
      addPermissionOptions(
        addCommonOptions(
          addProviderOptions(
            command
              .option('--port <n>', 'the port on 127.0.0.1 (default 0: a free one)')
              .option('--read-only', 'serve the log only: no action (start, send, approve, resume, fork…) and the store is only read')
              .option('--yes', 'answer every approval with yes in the sessions this server runs (deny rules and the workspace boundary still hold); also trusts the workspace\'s MCP configuration and untrusted project plugins'),
            'scripted provider: sessions started from the page play this JSON script',
          ),
        ),
      ),
    ),
  );

/**
 * `rein serve`: the workspace's store over HTTP on 127.0.0.1 (the API, `/openapi.json`, server-sent events from any
 * seq, and the viewer page), behind a per-launch token; `rein ui [id]`: the same, printing (or opening) the page.
 * Runs until interrupted. Sessions started or resumed from the page run in this process with these flags.
 */
export const registerServe = (program: Command): void => {
  serveOptions(program.command('serve').description('serve the workspace\'s sessions over a local HTTP API with live server-sent events, and the viewer page')).action(async (options: ServeOptions) =>
    (await import('./serve.action.js')).serveCommand(undefined, { ...options, open: false }, 'serve'),
  );
  serveOptions(program.command('ui').description('open the session viewer in the browser (rein serve, printing the page\'s URL)').argument('[id]', 'open at this session').option('--open', 'open the page in the default browser')).action(
    async (id: string | undefined, options: ServeOptions) => (await import('./serve.action.js')).serveCommand(id, options, 'ui'),
  );
};

/** `rein export <id> --html`: one self-contained, redacted HTML file of the viewer for a session. */
export const registerExport = (program: Command): void => {
  addCommonOptions(
    program
      .command('export')
      .description('write a session as one self-contained HTML file of the viewer, secrets redacted (read-only)')
      .argument('<id>', 'session id')
      .option('--html', 'as HTML (the only format so far)')
      .option('--out <file>', 'where to write it (default: <id>.html in the current directory)'),
  ).action(async (id: string, options: CommonOptions & { html?: boolean; out?: string }) => (await import('./serve.action.js')).exportCommand(id, options));
};
