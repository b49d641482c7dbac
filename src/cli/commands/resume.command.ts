import type { Command } from 'commander';
import { addCapabilityOptions, addCommonOptions, addPermissionOptions, addPluginOptions, addProviderOptions } from '../command-options.js';
import type { ResumeCommandOptions } from './resume.flags.js';

/**
 * `rein resume <id>`: rebuild a session from its log, resolve in-doubt effects by policy, and continue it with the
 * provider it was created with (name, model, endpoint or script; the key from the environment) unless flags say
 * otherwise.
 */
export const registerResume = (program: Command, setExit: (code: number) => void): void => {
  const command = program
    .command('resume')
    .description('continue a paused, interrupted or crashed session from its log')
    .argument('<id>', 'session id')
    .option('--yes', 'rerun in-doubt effects that need confirmation, and answer every approval request with yes; also trusts the workspace\'s MCP configuration and untrusted project plugins')
    .option('--confirm <effectId>', 'rerun this in-doubt call (e.g. root:e2) although its outcome is unknown; answers nothing else (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--no-memory', "run without the workspace's long-term memory (nothing injected or read, memory_read reports it disabled, no end-of-session pass): e.g. while its stream is damaged")
    .option('--max-cost <usd>', 'the cost budget in US dollars from here on, replacing the recorded one (a session paused for its budget continues with a higher one)')
    .option('--max-turns <n>', 'raise the turn budget of a session that ended budget-exhausted, or was interrupted, to n (above the turns it took) and continue it')
    .option('--max-tool-calls <n>', 'raise its tool-call budget to n (above the calls it made) and continue it')
    .option('--max-tokens <n>', 'raise its token budget to n (above the tokens it used) and continue it')
    .option('--max-wall-time <ms>', 'raise its wall-time budget to ms milliseconds since it started (above the time taken so far) and continue it')
    .option('--otlp <base-url>', 'send the spans that end from now on to this OpenTelemetry collector over OTLP/HTTP, as OTEL_EXPORTER_OTLP_ENDPOINT does');
  addCapabilityOptions(addPluginOptions(addPermissionOptions(addCommonOptions(addProviderOptions(command, 'scripted model (default: the script the session was started with)'))))).action(async (id: string, options: ResumeCommandOptions) =>
    (await import('./resume.action.js')).resumeCommand(id, options, setExit),
  );
};
