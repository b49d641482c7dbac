import type { Command } from 'commander';

export type { InitOptions } from './init.flags.js';
import type { InitOptions } from './init.flags.js';

/** `rein init`: a `rein.config.json` for the provider a person picks, `.rein/` in `.gitignore`, and what to run next. */
export const registerInit = (program: Command): void => {
  program
    .command('init')
    .description('set up a project: write rein.config.json for your provider, add .rein/ to .gitignore, print the next commands')
    .option('--workspace <dir>', 'the project directory (default: the root of the git repository you are in, else the current directory)')
    .option('--provider <name>', 'openai (any OpenAI-compatible endpoint), anthropic or scripted (default: openai)')
    .option('--model <id>', 'the model id (default: gpt-4.1-mini for openai, claude-sonnet-4-5 for anthropic)')
    .option('--base-url <url>', 'the endpoint, for a server other than the vendor\'s (Ollama: http://127.0.0.1:11434/v1)')
    .option('--force', 'replace an existing rein.config.json')
    .action(async (options: InitOptions) => (await import('./init.action.js')).initCommand(options));
};
