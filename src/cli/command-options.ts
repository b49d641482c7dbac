import type { Command } from 'commander';

/*
 * The flags commands share, declared without loading anything but commander: `rein --help` and every command's
 * parser are built from these, so this module (like every `*.command.ts`) must stay free of runtime imports. What a
 * flag's value means is decided in the action modules (`budgetsOf`, `permissionsOf`, `providerSettingsFor`, …).
 */

/** Options every command that opens a workspace and a store shares. */
export interface CommonOptions {
  workspace?: string;
  store?: string;
  json?: boolean;
  relaxed?: boolean;
}

/** Budget flags of `rein run`. */
export interface BudgetOptions {
  maxTurns?: string;
  maxToolCalls?: string;
  maxTokens?: string;
  maxWallTime?: string;
  maxCost?: string;
}

/** Permission and sandbox flags shared by `rein run` and `rein resume` (the sandbox ones by `rein sandbox` too). */
export interface PermissionOptions extends SandboxOptions {
  mode?: string;
  approve?: string[];
  deny?: string[];
  yes?: boolean;
}

/** The sandbox flags: `--sandbox`, `--network`, `--allow-host` (repeatable), `--login-shell` and the limits. */
export interface SandboxOptions {
  network?: string;
  sandbox?: string;
  allowHost?: string[];
  loginShell?: boolean;
  maxProcesses?: string;
  maxMemoryMb?: string;
  maxTmpMb?: string;
}

/** The provider flags of `rein run` and `rein resume`. */
export interface ProviderFlags {
  provider?: string;
  model?: string;
  baseUrl?: string;
  script?: string;
  from?: string;
  /** Repeated `--fallback` values; `false` with `--no-fallback`. */
  fallback?: string[] | false;
}

/** The capability flags of `rein run` and `rein resume` (`--yes` also trusts the workspace's MCP configuration). */
export interface CapabilityFlags {
  visibleLimit?: string;
  yes?: boolean;
}

/** The plugin flag `rein run`, `rein resume`, `rein replay --dry-run` and `rein plugins list` share. */
export interface PluginOptions {
  plugin?: string[];
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Add `--visible-limit <n>`. */
export const addCapabilityOptions = (command: Command): Command => command.option('--visible-limit <n>', 'at most this many tools per model call (default 64; the rest wait behind tool_search)');

/** `--plugin <dir>` (repeatable): load a plugin for this run only. */
export const addPluginOptions = (command: Command): Command => command.option('--plugin <dir>', 'load the plugin in <dir> (its rein-plugin.json) for this run only; repeatable', collect);

/** Add `--workspace`, `--store`, `--json` and `--relaxed`. */
export const addCommonOptions = (command: Command): Command =>
  command
    .option('--workspace <dir>', 'the workspace directory (default: the root of the git repository you are in, else the current directory)')
    .option('--store <dir|url>', 'the event store: a directory or a postgres:// URL (env REIN_STORE; default: <workspace>/.rein)')
    .option('--json', 'print one JSON record per line')
    .option('--relaxed', 'relaxed durability: group-commit fsyncs instead of one per step');

/** Add the budget flags of `rein run`. */
export const addBudgetOptions = (command: Command): Command =>
  command
    .option('--max-turns <n>', 'budget: model turns')
    .option('--max-tool-calls <n>', 'budget: tool calls')
    .option('--max-tokens <n>', 'budget: tokens')
    .option('--max-wall-time <ms>', 'budget: wall time in milliseconds')
    .option('--max-cost <usd>', 'budget: US dollars the whole session tree may spend on model calls (checked before each call; pauses, exit 6)');

/** Add `--mode`, `--approve <rule>` and `--deny <rule>` (repeatable), and the sandbox flags. */
export const addPermissionOptions = (command: Command): Command =>
  addSandboxOptions(
    command
      .option('--mode <mode>', 'permission mode: default, plan (read-only tools only) or accept-edits')
      .option('--approve <rule>', 'answer matching approval requests with yes in advance, e.g. write or "bash:npm test" (repeatable)', collect)
      .option('--deny <rule>', 'deny matching calls, whatever the answers, e.g. "bash:git push*" (repeatable)', collect),
  );

/** Add `--sandbox <mode>`, `--network <policy>`, `--allow-host <name>` (repeatable), `--login-shell` and the limits. */
export const addSandboxOptions = (command: Command): Command =>
  command
    .option('--sandbox <mode>', 'how bash is isolated: auto (bubblewrap when it works, else the fallback; default), required (refuse bash without bubblewrap) or off')
    .option('--network <policy>', 'network for bash: disabled (default), allow-list (only --allow-host names, through rein\'s proxy) or allow-all')
    .option('--allow-host <name>', 'a host name bash may reach under allow-list, e.g. registry.npmjs.org or *.example.com (repeatable; implies --network allow-list)', collect)
    .option('--login-shell', 'run bash as a login shell (bash -lc: reads the profile) instead of bash -c')
    .option('--max-processes <n>', 'the most processes a sandboxed command may have at once (default 1024)')
    .option('--max-memory-mb <n>', 'the data segment each process of a command may use, in MB (default 4096)')
    .option('--max-tmp-mb <n>', 'the size of each private tmpfs a sandboxed command writes (/tmp, its home, /dev/shm), in MB (default 1024)');

/** Add `--provider`, `--model`, `--base-url`, `--script`, `--from` and `--fallback` / `--no-fallback`. */
export const addProviderOptions = (command: Command, scriptHelp: string): Command =>
  command
    .option('--provider <name>', 'openai (any OpenAI-compatible endpoint), anthropic, scripted, recorded, or <plugin>__<id> for a provider a plugin contributes (env REIN_PROVIDER)')
    .option('--model <id>', 'the model id (env REIN_MODEL)')
    .option('--base-url <url>', 'the endpoint: OpenAI style includes /v1 (http://127.0.0.1:11434/v1), Anthropic style does not (env REIN_BASE_URL)')
    .option('--script <file>', scriptHelp)
    .option('--from <sessionId>', 'recorded provider: replay this logged session\'s model outputs')
    .option('--fallback <provider:model[@url]>', 'fall back to this provider when the first cannot answer (rate limit, overloaded, server error, network, timeout, quota); repeat for a chain', (value: string, previous: string[] | false = []) => [...(previous || []), value])
    .option('--no-fallback', 'run without any fallback chain, whatever rein.config.json or the resumed session says');
