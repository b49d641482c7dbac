import { isAbsolute, resolve } from 'node:path';
import * as z from 'zod';
import type { ModelOptions } from '../../models/model-contract.js';
import { readHostTextIfPresent } from '../util/read-regular-file.js';
import { ReinError } from '../host/host-errors.js';
import { configFileName } from './config-file-name.js';
import { isLoopbackHost } from '../util/loopback-host.js';
import { SandboxConfig } from '../policy/sandbox-config.js';
import { Prices } from '../../models/prices.js';
import { Budgets } from '../../models/budgets.js';
import { CaptureConfig } from '../changes/capture-config.js';
import { defaultAnthropicBaseUrl } from './anthropic.provider.js';
import { defaultOpenAIBaseUrl } from './openai-compatible.provider.js';
import { CommandHooksConfig } from '../hooks/command-hooks.js';
import { jsonProblem } from '../util/json-problem.js';
import { canonicalPath, isInside } from '../policy/protected-paths.js';
import { lazySchema } from '../../models/lazy-schema.js';

/** The providers rein can run: `openai` means any OpenAI-compatible endpoint. */
export const ProviderName = lazySchema(() => z.enum(['openai', 'anthropic', 'scripted', 'recorded']));
export type ProviderName = z.infer<typeof ProviderName>;

/** One link of a fallback chain: a remote provider and model (its key is read from `apiKeyEnv` or the vendor's variable). */
export const FallbackConfig = lazySchema(() => z
  .object({
    provider: z.enum(['openai', 'anthropic']),
    model: z.string().min(1),
    baseUrl: z.string().min(1).optional(),
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  })
  .strict());
export type FallbackConfig = z.infer<typeof FallbackConfig>;

/** The workspace config file, `<workspace>/rein.config.json`. It never holds a key: name the variable instead. */
export { configFileName } from './config-file-name.js';

/** What `rein.config.json` may say. Unknown fields are refused, and so is an `apiKey` (keys live in the environment). */
export const WorkspaceConfig = lazySchema(() => z
  .object({
    /** Notes for a person (`rein init` writes some); rein ignores them. JSON has no comments. */
    $comment: z.union([z.string(), z.array(z.string())]).optional(),
    provider: ProviderName.optional(),
    model: z.string().min(1).optional(),
    baseUrl: z.string().min(1).optional(),
    /** The environment variable holding the key (default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`). */
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
    /** A script file for the scripted provider, relative to the workspace. */
    script: z.string().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    /** No byte from the endpoint for this long is a `timeout` (ms). */
    idleTimeoutMs: z.number().int().positive().optional(),
    /** Providers a model call falls back to, in order, when the configured one cannot answer (at most 4). */
    fallbacks: z.array(FallbackConfig).max(4).optional(),
    /** The event store: a directory (relative to the workspace) or a `postgres://` URL without a password. */
    store: z
      .string()
      .min(1)
      .refine((value) => !/^postgres(ql)?:\/\/[^/@]*:[^/@]*@/i.test(value), 'a store URL in this file must not hold a password: use PGPASSWORD or ~/.pgpass')
      .optional(),
    /** MCP servers, as `.mcp.json` writes them (checked, and trusted, by the MCP loader; see README *MCP servers*). */
    mcpServers: z.record(z.string(), z.unknown()).optional(),
    /** The discovery policy: at most `visibleLimit` tools per round, `toolShare` of the window for their schemas. */
    capabilities: z.object({ visibleLimit: z.number().int().positive().optional(), toolShare: z.number().positive().max(1).optional() }).strict().optional(),
    /** Project plugins: local directories (relative to the workspace) or npm package names (docs/capabilities.md: *Plugins*). */
    plugins: z.array(z.string().min(1)).optional(),
    /** Each plugin's own config, by plugin id (what its `setup` gets as `config`). */
    pluginConfig: z.record(z.string(), z.unknown()).optional(),
    /** Command hooks, in the shape Claude Code's settings use (docs/capabilities.md: *Command hooks*). */
    hooks: CommandHooksConfig.optional(),
    /** How commands are isolated: `{ mode, network, allowedHosts, loginShell }` (docs/permissions.md: *The sandbox*). */
    sandbox: SandboxConfig.optional(),
    /** Offer `apply_patch` to real models: `true` for every model, or model-id globs (`["gpt-5*"]`); off by default. */
    applyPatch: z.union([z.boolean(), z.array(z.string().min(1))]).optional(),
    /** Most tool calls of one model reply that run; the rest are refused unrun, as results the model sees (default 32). */
    maxParallelToolCalls: z.number().int().positive().optional(),
    /** The workspace capture: `{ enabled, gitignore, exclude, include, maxFileMb }` (docs/replay.md: *Time travel*). */
    capture: CaptureConfig.optional(),
    /** Model prices, US dollars per million tokens, by model name or prefix, merged over the shipped ones (docs/model-input.md, "The cost budget"). */
    prices: Prices.optional(),
    /** Budgets of new sessions (flags win): `maxTurns`, `maxToolCalls`, `maxTokens`, `maxWallTimeMs`, `maxCostUsd`. */
    budgets: Budgets.partial().strict().optional(),
  })
  .strict());
export type WorkspaceConfig = z.infer<typeof WorkspaceConfig>;

/** The library options `rein.config.json` sets for every session of the workspace: the capture and the parallel-call limit. */
export const configuredOptionsOf = (config: WorkspaceConfig | undefined): { capture: NonNullable<WorkspaceConfig['capture']>; maxParallelToolCalls?: number } => ({
  capture: config?.capture ?? {},
  ...(config?.maxParallelToolCalls === undefined ? {} : { maxParallelToolCalls: config.maxParallelToolCalls }),
});

/** Read `<workspace>/rein.config.json`; absent is undefined, unreadable or invalid is `CONFIG_INVALID`. */
export const loadWorkspaceConfig = async (workspace: string): Promise<WorkspaceConfig | undefined> => {
  const path = resolve(workspace, configFileName);
  const text = await readHostTextIfPresent(path, path, (message) => new ReinError('CONFIG_INVALID', message));
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ReinError('CONFIG_INVALID', `${path} is not valid JSON (${jsonProblem(text, error)})`, { cause: error });
  }
  if (typeof value === 'object' && value !== null && 'apiKey' in value) {
    throw new ReinError('CONFIG_INVALID', `${path} must not hold an API key: set it in the environment and name the variable with "apiKeyEnv"`);
  }
  const parsed = WorkspaceConfig.safeParse(value);
  if (!parsed.success) throw new ReinError('CONFIG_INVALID', `${path}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`);
  return parsed.data;
};

/** Provider choices from one source; the CLI's flags, a session's first record, the environment or the file. */
export interface ProviderLayer {
  provider?: string | undefined;
  model?: string | undefined;
  baseUrl?: string | undefined;
  script?: string | undefined;
  from?: string | undefined;
}

/** Everything needed to build a provider. `apiKey` is read from the environment and must never be recorded. */
export interface ProviderSettings {
  provider: ProviderName;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  /** The variable the key was (or would be) read from, named in errors. */
  apiKeyEnv?: string;
  script?: string;
  from?: string;
  modelOptions: ModelOptions;
  idleTimeoutMs?: number;
  /** The fallback chain, in order (remote providers only). */
  fallbacks?: ProviderSettings[];
  /** Whether the file's `applyPatch` offers `apply_patch` to this model (absent: the harness's default for the provider). */
  applyPatch?: boolean;
}

export interface ProviderSources {
  /** Command-line flags (highest precedence). Relative script paths are resolved against `cwd`. */
  flags?: ProviderLayer;
  /** Fallback links as `<provider>:<model>[@<baseUrl>]` (the CLI's repeatable `--fallback`); they replace the file's. */
  fallbackFlags?: readonly string[];
  /** No fallback chain at all (the CLI's `--no-fallback`), whatever the file or the resumed session says. */
  noFallbacks?: boolean;
  /** The provider a resumed session was created with, `{ name, model, source }` (between flags and environment). */
  session?: { name: string; model?: string | undefined; source?: string | undefined; fallbacks?: ReadonlyArray<{ name: string; model?: string | undefined; source?: string | undefined }> | undefined };
  env?: Record<string, string | undefined>;
  /** The workspace config file; relative script paths are resolved against `workspace`. */
  file?: WorkspaceConfig | undefined;
  workspace: string;
  cwd?: string;
}

const sessionLayer = (session: NonNullable<ProviderSources['session']>): ProviderLayer => ({
  provider: session.name,
  model: session.model,
  ...(session.name === 'openai' || session.name === 'anthropic' ? { baseUrl: session.source } : {}),
  ...(session.name === 'scripted' ? { script: session.source } : {}),
  ...(session.name === 'recorded' ? { from: session.source } : {}),
});

const pick = <K extends keyof ProviderLayer>(layers: readonly ProviderLayer[], key: K): string | undefined => {
  for (const layer of layers) {
    const value = layer[key];
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
};

const needsKey = (baseUrl: string, official: string): boolean => new URL(baseUrl).host === new URL(official).host;

const officialOf = (provider: 'openai' | 'anthropic'): string => (provider === 'openai' ? defaultOpenAIBaseUrl : defaultAnthropicBaseUrl);


/**
 * What a workspace's `rein.config.json` (which a cloned repository ships) may decide about a key on its own: the key
 * goes only to the vendor's own host or to this machine, and only a variable made for a model API (`…_API_KEY`) is
 * read. Anything else — `baseUrl` at another host, `apiKeyEnv: "AWS_SECRET_ACCESS_KEY"` — is `USAGE` naming the flag
 * or variable that confirms it (`--base-url`, `REIN_BASE_URL`), so a repository cannot send your secrets anywhere.
 */
const checkFileEndpoint = (provider: 'openai' | 'anthropic', official: string, baseUrl: string | undefined, apiKeyEnv: string | undefined, what: string): void => {
  if (apiKeyEnv !== undefined && !/_API_KEY$/.test(apiKeyEnv)) {
    throw new ReinError('USAGE', `${what}: ${configFileName} names ${apiKeyEnv} as the key variable; a workspace file may only name a variable ending in _API_KEY (a repository could otherwise send any secret of your environment): rename the variable or drop "apiKeyEnv"`);
  }
  if (baseUrl === undefined) return;
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return; // resolveRemote reports the bad URL
  }
  if (host !== new URL(official).hostname && !isLoopbackHost(host)) {
    throw new ReinError('USAGE', `${what}: ${configFileName} sends the ${provider} key to ${host}, which is neither ${new URL(official).hostname} nor this machine; confirm the endpoint with --base-url ${baseUrl} or REIN_BASE_URL (a repository's file alone cannot choose where your key goes)`);
  }
};

/** Parse `<provider>:<model>[@<baseUrl>]` (the `--fallback` flag); anything else is a `USAGE` error that shows the form. */
export const parseFallbackFlag = (text: string): FallbackConfig => {
  // The endpoint is the part after the last `@` that starts a URL, so model ids with an `@` (Vertex style) still work.
  const match = /^(openai|anthropic):(\S+?)(?:@([A-Za-z][A-Za-z0-9+.-]*:\/\/\S+))?$/.exec(text.trim());
  if (!match) throw new ReinError('USAGE', `--fallback ${JSON.stringify(text)}: expected <openai|anthropic>:<model>[@<base url>], e.g. anthropic:claude-sonnet-4-5 or openai:llama3.1@http://127.0.0.1:11434/v1`);
  return { provider: match[1] as FallbackConfig['provider'], model: match[2]!, ...(match[3] ? { baseUrl: match[3] } : {}) };
};

/** The endpoint, key variable and key of a remote provider; a bad URL or a missing key for the vendor's own host is `USAGE`. */
const resolveRemote = (provider: 'openai' | 'anthropic', model: string, baseUrlOrDefault: string | undefined, apiKeyEnvOrDefault: string | undefined, env: Record<string, string | undefined>, what: string) => {
  const official = provider === 'openai' ? defaultOpenAIBaseUrl : defaultAnthropicBaseUrl;
  const baseUrl = baseUrlOrDefault ?? official;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ReinError('USAGE', `${what}: the base URL ${JSON.stringify(baseUrl)} is not a URL (expected e.g. ${official})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ReinError('USAGE', `${what}: the base URL must be http or https, got ${url.protocol}`);
  // Credentials in the URL would travel into error messages (and fetch refuses them anyway): the key has its own place.
  if (url.username || url.password) throw new ReinError('USAGE', `${what}: the base URL must not hold credentials (user:password@): put the key in the environment variable apiKeyEnv names (${apiKeyEnvOrDefault ?? (provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY')})`);
  const apiKeyEnv = apiKeyEnvOrDefault ?? (provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY');
  const apiKey = env[apiKeyEnv] || undefined;
  if (!apiKey && needsKey(baseUrl, official)) throw new ReinError('USAGE', `${what} needs an API key for ${official}: set ${apiKeyEnv}`);
  return { model, baseUrl, apiKeyEnv, ...(apiKey ? { apiKey } : {}) };
};

/**
 * Resolve which provider to run and how, with the precedence flags > session (resume) > environment (`REIN_PROVIDER`,
 * `REIN_MODEL`, `REIN_BASE_URL`) > workspace file > defaults (the vendor's base URL). `--script` alone selects the
 * scripted provider. A missing or unknown provider, a missing model, script or source session, a bad base URL, or a
 * missing key for the vendor's own endpoint is a `USAGE` error that names the fix; the key itself is never shown.
 */
export const resolveProviderSettings = (sources: ProviderSources): ProviderSettings => {
  const env = sources.env ?? {};
  const flags = { ...sources.flags };
  if (flags.script && !flags.provider) flags.provider = 'scripted';
  if (flags.from && !flags.provider) flags.provider = 'recorded';
  const session = sources.session && (!flags.provider || flags.provider === sources.session.name) ? sessionLayer(sources.session) : {};
  const file: ProviderLayer = sources.file ?? {};
  const environment: ProviderLayer = { provider: env.REIN_PROVIDER, model: env.REIN_MODEL, baseUrl: env.REIN_BASE_URL };
  const layers = [flags, session, environment, file];
  const name = pick(layers, 'provider');
  if (!name) throw new ReinError('USAGE', `no model provider configured: pass --provider openai|anthropic|scripted|recorded (or --script <file>), set REIN_PROVIDER, or add "provider" to ${configFileName}`);
  const parsed = ProviderName.safeParse(name);
  if (!parsed.success) throw new ReinError('USAGE', `unknown provider ${JSON.stringify(name)}: expected openai, anthropic, scripted or recorded`);
  const provider = parsed.data;
  const modelOptions: ModelOptions = {
    ...(sources.file?.temperature === undefined ? {} : { temperature: sources.file.temperature }),
    ...(sources.file?.maxOutputTokens === undefined ? {} : { maxOutputTokens: sources.file.maxOutputTokens }),
  };
  const idle = sources.file?.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: sources.file.idleTimeoutMs };
  // Like the provider itself: flags, then the chain a resumed session recorded, then the file's. A chain from the file
  // or a session only backs a remote provider (a scripted or recorded run never needs the fallbacks' keys); a
  // recorded link takes its key variable from the file's matching link, if any.
  const fileLinks = sources.file?.fallbacks ?? [];
  const recorded = (sources.session && sources.session.name === provider ? (sources.session.fallbacks ?? []) : []).flatMap((link): FallbackConfig[] => {
    if ((link.name !== 'openai' && link.name !== 'anthropic') || !link.model) return [];
    const match = fileLinks.find((entry) => entry.provider === link.name && entry.model === link.model && (entry.baseUrl === undefined || entry.baseUrl === link.source));
    return [{ provider: link.name, model: link.model, ...(link.source ? { baseUrl: link.source } : {}), ...(match?.apiKeyEnv ? { apiKeyEnv: match.apiKeyEnv } : {}) }];
  });
  const remote = provider === 'openai' || provider === 'anthropic';
  const links = sources.noFallbacks ? [] : sources.fallbackFlags && sources.fallbackFlags.length > 0 ? sources.fallbackFlags.map(parseFallbackFlag) : !remote ? [] : recorded.length > 0 ? recorded : fileLinks;
  if (links.length > 4) throw new ReinError('USAGE', `at most 4 fallback providers, got ${links.length}`);
  if (links.length > 0 && provider === 'recorded') throw new ReinError('USAGE', 'the recorded provider replays logged outputs and has no fallbacks');
  // Links from the workspace file obey its limits; those given as flags or recorded by the session are the user's.
  // (a recorded link's endpoint is the session's, but its key variable still comes from the file).
  for (const [index, link] of links.entries()) if (links === fileLinks || links === recorded) checkFileEndpoint(link.provider, officialOf(link.provider), links === fileLinks ? link.baseUrl : undefined, link.apiKeyEnv, `fallback ${index + 1} (${link.provider}:${link.model})`);
  const fallbacks: ProviderSettings[] = links.map((link, index) => ({
    provider: link.provider,
    modelOptions,
    ...idle,
    ...resolveRemote(link.provider, link.model, link.baseUrl, link.apiKeyEnv, env, `fallback ${index + 1} (${link.provider}:${link.model})`),
  }));
  const base = { provider, modelOptions, ...idle, ...(fallbacks.length > 0 ? { fallbacks } : {}) };
  if (flags.script && provider !== 'scripted') throw new ReinError('USAGE', `--script belongs to the scripted provider, not ${provider}`);
  if (flags.from && provider !== 'recorded') throw new ReinError('USAGE', `--from belongs to the recorded provider, not ${provider}`);

  if (provider === 'scripted') {
    const fromFlags = pick([flags, session], 'script');
    const script = fromFlags ? resolve(sources.cwd ?? process.cwd(), fromFlags) : file.script ? (isAbsolute(file.script) ? file.script : resolve(sources.workspace, file.script)) : undefined;
    if (!script) throw new ReinError('USAGE', `the scripted provider needs a script: pass --script <file> or add "script" to ${configFileName}`);
    // A repository's file names a script inside that repository: never a file elsewhere on this machine (`../secret`,
    // `/etc/passwd`), whose bytes an error could print. A script the user names with --script may be anywhere.
    if (!fromFlags && !isInside(canonicalPath(sources.workspace), canonicalPath(script))) throw new ReinError('SCRIPT_INVALID', `the script ${configFileName} names (${JSON.stringify(file.script)}) is outside the workspace: name a file inside it, or pass --script <file>`);
    return { ...base, script };
  }
  if (provider === 'recorded') {
    const from = pick([flags, session], 'from');
    if (!from) throw new ReinError('USAGE', 'the recorded provider needs the session to replay: pass --from <sessionId>');
    return { ...base, from };
  }
  const model = pick(layers, 'model');
  if (!model) throw new ReinError('USAGE', `the ${provider} provider needs a model: pass --model <id>, set REIN_MODEL, or add "model" to ${configFileName}`);
  const baseUrl = pick(layers, 'baseUrl');
  const fromFile = baseUrl !== undefined && pick([flags, session, environment], 'baseUrl') === undefined;
  checkFileEndpoint(provider, officialOf(provider), fromFile ? baseUrl : undefined, sources.file?.apiKeyEnv, `the ${provider} provider`);
  const applyPatch = applyPatchFor(sources.file?.applyPatch, model);
  return { ...base, ...resolveRemote(provider, model, baseUrl, sources.file?.apiKeyEnv, env, `the ${provider} provider`), ...(applyPatch === undefined ? {} : { applyPatch }) };
};

/** Whether `applyPatch` (true, false or model-id globs with `*`) covers this model; undefined when not set. */
export const applyPatchFor = (setting: boolean | readonly string[] | undefined, model: string): boolean | undefined => {
  if (setting === undefined || typeof setting === 'boolean') return setting;
  return setting.some((pattern) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(model));
};
