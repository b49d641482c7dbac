import { lstat, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ReinError } from '../../host/host-errors.js';
import { configFileName } from '../../providers/config-file-name.js';
import { WorkspaceConfig } from '../../providers/provider-settings.js';
import { repositoryRootOf, workspaceNote } from '../cli-context.js';
import { printText } from '../print-text.js';
import type { InitOptions } from './init.flags.js';

/** The providers `rein init` writes a configuration for, with the model it suggests and the variable holding the key. */
const providers = {
  openai: { model: 'gpt-4.1-mini', keyEnv: 'OPENAI_API_KEY' },
  anthropic: { model: 'claude-sonnet-4-5', keyEnv: 'ANTHROPIC_API_KEY' },
  scripted: { model: undefined, keyEnv: undefined },
} as const;

/** What `rein init` did and what to run next: the CLI prints it, and a test runs the commands. */
export interface InitResult {
  config: string;
  gitignore: 'added' | 'present' | 'created';
  next: string[];
}

/** The file's text: the settings, then a `$comment` a person reads (JSON has no comments; the loader ignores it). */
const configText = (config: WorkspaceConfig, keyEnv: string | undefined): string => {
  const comment = [
    'rein reads this file in every command run in this project; flags and REIN_* variables override it.',
    keyEnv ? `The key is never written here: rein reads it from ${keyEnv} (apiKeyEnv names another variable).` : 'The scripted provider plays script.json: no key, no network.',
    'Other fields: temperature, maxOutputTokens, fallbacks, sandbox, mcpServers, hooks, plugins, capture, store — see docs/configuration.md.',
  ];
  return `${JSON.stringify({ $comment: comment, ...config }, null, 2)}\n`;
};

/** A script the scripted provider plays: it looks at the project and says what it saw. */
const sampleScript = { turns: [{ text: 'Looking at the project.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'I listed the top-level directory; the scripted provider changes nothing.' }] };

/** Add `.rein/` to the project's `.gitignore` unless a line already ignores it. */
const ignoreStore = async (workspace: string): Promise<InitResult['gitignore']> => {
  const path = join(workspace, '.gitignore');
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text !== undefined && text.split(/\r?\n/).some((line) => /^\/?\.rein\/?$/.test(line.trim()))) return 'present';
  const eol = text?.includes('\r\n') ? '\r\n' : '\n';
  await writeFile(path, `${text ?? ''}${text === undefined || text === '' || text.endsWith('\n') ? '' : eol}# rein's event store (sessions, blobs)${eol}.rein/${eol}`);
  return text === undefined ? 'created' : 'added';
};

/**
 * Write the configuration and the ignore line; refuse to replace a configuration unless `force`. The project is the
 * workspace every other command would use here (`--workspace`, else the root of the git repository the current
 * directory is in, else the current directory), so the commands it prints find the file it wrote.
 */
export const initProject = async (options: InitOptions): Promise<InitResult> => {
  const workspace = resolve(options.workspace ?? (await repositoryRootOf(process.cwd())) ?? process.cwd());
  const stat = await lstat(workspace).catch(() => undefined);
  if (!stat?.isDirectory()) throw new ReinError('USAGE', `${workspace} is not a directory`);
  const name = options.provider ?? 'openai';
  if (!(name in providers)) throw new ReinError('USAGE', `--provider must be openai, anthropic or scripted, got ${JSON.stringify(name)}`);
  const provider = providers[name as keyof typeof providers];
  if (name === 'scripted' && (options.model !== undefined || options.baseUrl !== undefined)) throw new ReinError('USAGE', 'the scripted provider takes no --model or --base-url');
  if (options.baseUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(options.baseUrl)) throw new ReinError('USAGE', `--base-url must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
  const path = join(workspace, configFileName);
  if (!options.force && (await lstat(path).catch(() => undefined))) throw new ReinError('USAGE', `${path} exists: edit it, or run rein init --force to replace it`);
  const config: WorkspaceConfig =
    name === 'scripted'
      ? { provider: 'scripted', script: 'script.json' }
      : { provider: name as 'openai' | 'anthropic', model: options.model ?? provider.model!, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) };
  // What rein init writes is what every other command accepts.
  WorkspaceConfig.parse(config);
  if (name === 'scripted' && !(await lstat(join(workspace, 'script.json')).catch(() => undefined))) await writeFile(join(workspace, 'script.json'), `${JSON.stringify(sampleScript, null, 2)}\n`);
  await writeFile(path, configText(config, provider.keyEnv));
  const gitignore = await ignoreStore(workspace);
  // A local endpoint (Ollama, vLLM, a loopback server) usually needs no key.
  const local = options.baseUrl !== undefined && /^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(\/|$)/.test(options.baseUrl);
  const next = [
    ...(provider.keyEnv && !local ? [`export ${provider.keyEnv}=…`] : []),
    'npx rein run "describe this project in three sentences"',
    'npx rein sessions',
    'npx rein ui',
  ];
  return { config: path, gitignore, next };
};

/** The body of `rein init`. */
export const initCommand = async (options: InitOptions): Promise<void> => {
  const result = await initProject(options);
  const note = workspaceNote(options, dirname(result.config));
  if (note) printText(`rein: ${note}\n`, process.stderr);
  printText(`wrote ${result.config}\n${result.gitignore === 'present' ? '.gitignore already ignores .rein/' : `${result.gitignore === 'created' ? 'created .gitignore with' : 'added'} .rein/ ${result.gitignore === 'created' ? '' : 'to .gitignore'}`.trimEnd()}\n\nnext:\n${result.next.map((line) => `  ${line}`).join('\n')}\n`);
};
