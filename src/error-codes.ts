/*
 * Every stable error code rein raises, with the class it is raised as and what it means. This is the source of
 * docs/reference/errors.md (`npm run docs`): a code added to a layer's union without a line here does not compile.
 */
import { InspectError, type InspectErrorCode } from './inspect/inspect-errors.js';
import { McpError, type McpErrorCode } from './mcp/mcp-errors.js';
import { MemoryError, type MemoryErrorCode } from './memory/memory-errors.js';
import { PluginError, type PluginErrorCode } from './plugins/plugin-errors.js';
import { ProjectionError, type ProjectionErrorCode } from './projections/projection-errors.js';
import { ReinError, type HostErrorCode } from './host/host-errors.js';
import { ServeError, type ServeErrorCode } from './serve/serve-errors.js';
import { StoreError, type StoreErrorCode } from '../stores/store-errors.js';
import { TelemetryError, type TelemetryErrorCode } from './telemetry/telemetry-errors.js';
import { ProviderErrorCode } from '../models/model.records.js';
import { ToolErrorCode } from '../models/tool.records.js';

/** One layer's codes: where they are raised and what each one means. */
export interface ErrorCodeFamily {
  /** A short name for the layer (`store`, `host`, …). */
  layer: string;
  /** What raises these codes, in one sentence. */
  about: string;
  /** The class the codes are raised as (a subclass may refine it), or where the code is carried when it is not raised. */
  raisedAs: string;
  /** The source file holding the code list, relative to the package root. */
  source: string;
  /** Each code and when it is raised. */
  codes: Readonly<Record<string, string>>;
}

const storeCodes: Record<StoreErrorCode, string> = {
  STORE_CONFLICT: 'an append\'s `expectedSeq` is not the stream\'s head; nothing was written',
  STORE_CORRUPT_RECORD: 'a stored record fails its checksum or cannot be decoded; LevelDB reports corruption (a truncated `MANIFEST`, a damaged table block — whether a read meets it or opening the stream does); a stream directory holds data but lost its `CURRENT` file',
  STORE_STREAM_NOT_FOUND: 'forking a stream that does not exist',
  STORE_STREAM_EXISTS: 'forking into a name already in use',
  STORE_INVALID_ARGUMENT: 'a bad stream name, range or draft',
  STORE_CODEC_MISMATCH: 'a stream was written with other codec settings than this build pins',
  STORE_LOCKED: 'writing (or resuming, `hold`) a stream another process holds',
  STORE_CLOSED: 'using a closed store',
  STORE_READ_ONLY: 'writing through a store opened read-only (or a LevelDB database that is read-only, `LEVEL_READONLY`)',
  STORE_IO: 'a store directory that cannot be created (`--store /dev/null/x`: a part is not a directory; `--store /proc/x`), at once and naming the path; LevelDB failed for another reason (`LEVEL_IO_ERROR`, a database that would not open, …; the `LEVEL_*` code is in the message). classic-level\'s `LEVEL_CORRUPTION` is `STORE_CORRUPT_RECORD` and `LEVEL_LOCKED` is `STORE_LOCKED`; no `LEVEL_*` error leaves the store unmapped when a stream opens',
  BLOB_NOT_FOUND: 'an unknown artifact ref',
  BLOB_CORRUPT: 'a blob whose bytes no longer match its hash, or that a damaged LevelDB stream cannot give back (its tables hold a garbled key: damage, not absence)',
  STORE_VERSION_UNSUPPORTED: 'a record written by a newer release, or an old version with no upcast step',
  STORE_FENCED: 'an append carrying a lease (owner, epoch) that no longer holds, or an unfenced append to a leased stream; nothing written',
  STORE_UNAVAILABLE: 'the PostgreSQL server could not be reached for longer than the retry window',
  STORE_BACKEND: 'any other PostgreSQL error (its SQLSTATE in the message)',
  CHAIN_BROKEN: 'a log\'s records no longer follow one another as their chain fields recorded — a record changed, inserted, deleted or moved, a record without a field after the chain started, the stream cut below its seal (`ChainError.seq`: the first record concerned); `rein verify` / `rein replay` / `rein resume` exit 4 (see *The chain*)',
  CHAIN_UNAUTHENTICATED: 'a log whose chain is intact but not authenticated by this machine\'s key from `ChainError.seq` on (another machine\'s key, a rewrite without the key, a seal that does not match or is missing where the store writes one with every append), or one written before the chain (replay and verify; resume continues it and starts its chain); exit 5',
  CHAIN_KEY_INVALID: 'the chain key file is not a regular file, is open to other users (mode beyond 0600), or does not hold 64 hex digits',
  CHAIN_KEY_UNAVAILABLE: 'the chain key cannot be read or created (a read-only or missing home): set `REIN_CONFIG_HOME` or `REIN_CHAIN_KEY_FILE`',
};

const hostCodes: Record<HostErrorCode, string> = {
  REPLAY_DIVERGENCE: 'replay regenerated a record that differs from the stored one (`DivergenceError.seq`)',
  MACHINE_ERROR: 'a statechart threw, or an effect kind has no executor',
  SESSION_NOT_FOUND: 'no such session in the store',
  SESSION_INVALID: 'a log that does not start with `session.created`, or a session id already in use',
  SESSION_ENDED: 'a step after the session was interrupted, or `session.send` to a session that has ended (the message is not written)',
  LAUNCHER_UNRESOLVED: 'an MCP server or a command hook started by a package launcher (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`) whose package npm could not install into rein\'s own packages folder, or that offers no such program: it is not started from the workspace instead',
  SCRIPT_INVALID: 'a script file that is missing, not a regular file (a FIFO …), not JSON, or not in the script format',
  CONFIG_INVALID: '`rein.config.json` that is not JSON, has unknown fields or wrong types (a bad `sandbox` mode, policy or host name too), or holds an `apiKey`; a `rein.config.json`, `.mcp.json` or trust file that is not a regular file (a FIFO, socket, device or folder) or cannot be read',
  INPUT_INVALID: 'an input record whose data does not match its schema, or a blank `session.send` text (nothing written)',
  RESUME_BLOCKED: 'resuming in a workspace other than the session\'s',
  FORK_NOT_AT_BOUNDARY: 'a fork seq inside a step',
  APPROVAL_NOT_FOUND: '`session.approve` for an approval that is not pending (unknown, already answered, or withdrawn because the agent that asked was stopped — a join can decide while an answer is on its way); nothing written. `rein approve` for an id that is neither a pending approval nor an in-doubt call awaiting confirmation, or that was already answered through the queue',
  LEASE_LOST: 'a worker\'s lease lapsed or was taken over: its session stops without writing',
  SESSION_LEASED: 'a session held by a live worker\'s lease was resumed or answered from elsewhere',
  QUEUE_UNSUPPORTED: '`--detach`, `submit`, `rein approve` or `rein worker` on a store without a queue (only PostgreSQL has one)',
  STORE_NOT_FOUND: '`rein store copy --from` a directory that does not exist',
  COST_BUDGET_REACHED: 'the stop code of a session that paused before a model call because the tree\'s recorded spend, the calls under way and this call\'s worst case would pass its cost budget (`--max-cost`, `budgets.maxCostUsd`), or a price it needs is unknown: recorded in `session.interrupted.budget` and the session result\'s `stop`, exit 6; `rein resume <id> --max-cost <higher>` continues it (docs/model-input.md, "The cost budget"). Raised as an error only by a model-call executor run outside a host',
  BUDGET_NOT_RAISED: '`rein resume <id> --max-turns/--max-tool-calls/--max-tokens/--max-wall-time` (the library\'s `resumeSession(id, { budgets })`) that cannot let the session go on: it ended other than `budget-exhausted` (completed, failed, cancelled; an interrupted session takes a raise), a limit is not a whole number above what is already spent, or a budget is still spent with the raise applied (one not given; a spent tool-call budget needs --max-tool-calls); nothing is recorded (exit 2)',
  PRICE_UNKNOWN: 'a cost budget was given for a model (or a fallback model) that has no price in the table (the shipped defaults merged with `prices`): the budget could not be checked, so nothing ran (exit 2); give the model a price in `prices`',
  STORE_COPY_INCOMPLETE: '`rein store copy` could not copy (or verify) some streams; each is printed with its own code, every other stream was copied',
  OUTPUT_SCHEMA_INVALID: '`rein run --output-schema` names a file that is missing, not JSON or not a JSON Schema object zod can read; `createSession({ output })` with a schema that cannot be shown as JSON Schema (nothing written)',
  OUTPUT_INVALID: 'a session with an output schema ended without a valid final answer: the model\'s answers failed validation `maxOutputCorrections` + 1 times (`session.ended.reason` starts with it, `outputErrors` names the errors; `session.output()` rejects with `OutputError`), or it ended otherwise first',
  HARNESS_CLOSED: '`createSession`, `startSession`, `resumeSession` or `submit` on a harness after `rein.close()`: create another with `createRein`',
  REWIND_CONFLICT: 'a rewind would overwrite a file changed outside rein since the session last recorded it, or needs a content never stored (above the capture\'s size cap); nothing changed (`force` / `--force` goes on)',
  REWIND_BUSY: '`rein.rewind` of a session this harness is running: interrupt it (or wait until it is released) first',
  USAGE: 'bad command-line usage: no or an unknown provider, a missing model, script, `--from` id or API key (a `--from` id the store does not hold is `SESSION_NOT_FOUND`), a bad base URL, a workspace inside rein\'s configuration folder; in the library, options `createRein`, `createSession`, `startSession` or `submit` cannot apply (a blank task, an unknown budget or one that is not a whole number), naming the field',
};

const projectionCodes: Record<ProjectionErrorCode, string> = {
  PROJECTION_GAP: 'a view was offered a record past a seq it has not seen (`ProjectionGapError.expectedSeq`, `receivedSeq`)',
  CONTEXT_NOT_RECORDED: 'the model-input blob a `context.projected` names is missing',
  TURN_NOT_FOUND: '`rein context` for a turn (or attempt) the actor never had (`root has no model turn 9; turns: 1, 2`)',
  ACTOR_NOT_FOUND: '`rein context --actor` a path the session never had (`this session has no actor root/nope; actors with model turns: root, root/delegation-2/map`), exit 2',
};

const inspectCodes: Record<InspectErrorCode, string> = {
  INSPECTOR_UNREACHABLE: 'nothing listens at the inspector URL, or the connection failed',
  INSPECTOR_NOT_LOCAL: 'an inspector URL that is not `ws://` on 127.0.0.1, localhost or [::1]',
  INSPECTOR_PORT_IN_USE: '`rein inspect --serve <port>`: the port is taken on 127.0.0.1 (a `--serve` value that is not a port number is `USAGE`)',
};

const telemetryCodes: Record<TelemetryErrorCode, string> = {
  TELEMETRY_CONFIG_INVALID: 'an OTLP endpoint that is not an http(s) URL, `grpc` or another unknown protocol, a timeout that is not a positive number, an exporter without `export` / `shutdown`; raised before anything runs (exit 2)',
  TELEMETRY_EXPORT_FAILED: '`rein trace --otlp`: the collector refused a batch or never answered (a live export never fails a session: it counts drops)',
};

const mcpCodes: Record<McpErrorCode, string> = {
  MCP_SERVER_NOT_FOUND: '`rein mcp tools` for a server no configuration file names',
  MCP_UNTRUSTED: '`rein mcp tools` for a server of a file you have not trusted (or that changed since): run `rein mcp trust`',
  MCP_CONNECT_FAILED: '`rein mcp tools` could not start or reach the server (the error says why)',
};

const pluginCodes: Record<PluginErrorCode, string> = {
  PLUGIN_MANIFEST_INVALID: 'a plugin\'s manifest is missing, not a regular file (a FIFO …), not JSON, has unknown fields or wrong types, or is not the module\'s (recorded in `plugin.failed`; the plugin never runs)',
  PLUGIN_HOST_VERSION: 'a plugin\'s `requires.hostVersion` range does not include this rein',
  PLUGIN_PERMISSION_DENIED: 'a plugin asks for a permission `pluginPolicy.deniedPermissions` refuses (it is `disabled`)',
  PLUGIN_UNTRUSTED: 'a project plugin that was not trusted (or changed since: its message starts `untrusted (changed)`, as `rein mcp list` says of a changed MCP file): `disabled` until `rein plugins trust` or `--yes`',
  PLUGIN_SOURCE_REFUSED: 'a `test` plugin outside the test runtime, or a plugin that is not enabled',
  PLUGIN_LOAD_FAILED: 'a plugin\'s module could not be imported, or exports no plugin',
  PLUGIN_CONFIG_INVALID: 'a plugin\'s config does not fit its `config` schema (the configure phase)',
  PLUGIN_SETUP_FAILED: 'a plugin\'s `setup` threw or took too long (the start phase), or a plugin command failed',
  PLUGIN_CONTRIBUTION_INVALID: 'a contribution is malformed, undeclared in the manifest, has a risk the permissions do not cover, or a schema that cannot be advertised (nothing of the plugin is registered)',
  PLUGIN_CONFLICT: 'two plugins with one id, or a full id registered twice',
  PLUGIN_STOP_FAILED: 'a plugin\'s `stop` threw or took too long',
  PLUGIN_NOT_FOUND: 'a plugin directory without `rein-plugin.json`, or a configured npm package that is not installed',
  PLUGIN_FOLDER_INVALID: 'a project plugin\'s folder rein cannot digest whole, so it can never be trusted: more than 10,000 entries or 64 MiB of files, deeper than 32 folders, a symbolic link that leads out of it (or nowhere), or a FIFO, socket or device in it (see *The plugin folder*)',
  HOOK_CONFIG_INVALID: 'reserved for hook configuration errors outside `rein.config.json` (there, a bad `hooks` field is `CONFIG_INVALID`)',
  HOOK_UNTRUSTED: 'a command hook of `rein.config.json` that is not loaded because you have not trusted the file\'s `hooks` section (or it changed since): shown by `rein plugins list`; trust it with `rein hooks trust` or `--yes`. Hooks never trusted are not an error of the run (the session goes on without them, and stderr says so); a section that **changed** since you trusted it, with nobody to trust it again (no terminal, no `--yes`), makes `rein run`, `rein resume` and a `rein worker` job refuse to start with this error (exit 2), as it would otherwise run without the guards you trusted',
  PROMPT_BLOCKED: '`session.send` of a message a `userPromptSubmit` hook blocked (the refusal is recorded; nothing reached the model). `rein run` whose task is blocked ends the session `cancelled` (`the task was not sent: …`), prints its summary with the session id, then this error, and exits 1; `rein show` prints the block (`prompt blocked by command:UserPromptSubmit#1 — <reason> (the message was not sent)`). The task itself stays in `session.created` (recorded before the hook runs) and so in the `rein sessions` listing',
};

const serveCodes: Record<ServeErrorCode, string> = {
  SERVE_UNAUTHORIZED: 'a request to `rein serve` without its token (no `Authorization: Bearer`, no page cookie) or with another one (401)',
  SERVE_FORBIDDEN: 'a request to `rein serve` through a `Host` that is not loopback, from another site\'s `Origin`, or changing state without JSON (403)',
  SERVE_READ_ONLY: 'an action sent to a read-only server (`--read-only`, or no provider to run sessions with) (403)',
  SERVE_NOT_FOUND: 'no such route (404)',
  SERVE_METHOD_NOT_ALLOWED: 'a route that exists, but not with that method (405)',
  SERVE_BAD_REQUEST: 'a path, query or body that does not match the route\'s schema, or a body that is not JSON or is over 1 MB (400)',
  SERVE_SESSION_BUSY: 'resuming a session this server already runs (409)',
  SERVE_NOT_RUNNING: 'interrupting a session this process does not run, or an action that needs an ended session to run (409)',
  SERVE_ASSETS_MISSING: 'the viewer page was not built (`npm run build` writes `dist/ui`)',
};

const memoryCodes: Record<MemoryErrorCode, string> = {
  MEMORY_NOT_FOUND: 'no memory candidate or store record with that id (revoke of an unknown record too)',
  MEMORY_CANDIDATE_CLOSED: 'approving or rejecting a candidate already approved, rejected or expired; nothing written',
  MEMORY_RECORD_CLOSED: 'revoking a record that is already revoked; nothing written',
  MEMORY_NOT_MUTATION_READY: 'approving a candidate whose source turn was blocked (it is then recorded `rejected`) or is still open (nothing written), or whose session log is gone',
  MEMORY_CANDIDATE_INVALID: 'approving a candidate governance cannot promote even with a person\'s word (task scope, bad metadata)',
  MEMORY_PROMOTION_REQUIRED: 'a `memory.promoted` offered to the governance log that `promoteCandidate` did not make; nothing written',
  MEMORY_BUSY: 'the governance stream stayed locked or kept moving for every attempt of a write',
};

const toolCodes: Record<ToolErrorCode, string> = {
  InvalidInput: 'the call\'s arguments do not fit the tool\'s schema or a runtime precondition (names the tool, the problem and every received field with its type)',
  NotFound: 'the tool or the file it names does not exist',
  Denied: 'the permission policy, a hook or the person refused the call',
  Timeout: 'the tool ran past its time limit',
  NonZeroExit: 'kept for compatibility: `bash` reports non-zero exits as results',
  InDoubt: 'a call that changes something was interrupted by a crash and may or may not have happened',
  Cancelled: 'the session was cancelled or interrupted while the tool ran',
  ExecutionFailed: 'a tool ran and reported failure (an MCP result with `isError`, a server\'s protocol error)',
  Unavailable: 'the tool\'s MCP server is down or gone',
  ToolFailed: 'a plugin tool\'s handler threw or returned something that is not a tool result',
};

const providerCodes: Record<ProviderErrorCode, string> = {
  rate_limit: 'from HTTP 429, `rate_limit_error`; retryable: yes; rein waits `retry-after-ms` / `retry-after` (seconds or a date) when sent, else backoff',
  overloaded: 'from HTTP 529 / 503, `overloaded_error` (also mid-stream); retryable: yes; rein backoff',
  server_error: 'from other 5xx, 409, `api_error`, a mid-stream `{ "error" }` event, a non-JSON event; retryable: yes; rein backoff',
  network: 'from connection refused or reset, a stream that ends before its finish signal; retryable: yes; rein backoff; nothing incomplete is proposed',
  timeout: 'from 408, 504, no byte for `idleTimeoutMs`; retryable: yes; rein backoff',
  malformed_tool_call: 'from tool arguments that are not a JSON object, a call without a name; retryable: yes; rein a fresh sample',
  context_length: 'from `context_length_exceeded`, "prompt is too long", 413, llama.cpp / vLLM context messages, Anthropic stop reason `model_context_window_exceeded`; retryable: no; rein asks the compaction hook once, then one more attempt; otherwise fails',
  auth: 'from 401, 403; retryable: no; rein fails at once, naming the variable to check (`OPENAI_API_KEY`)',
  bad_request: 'from other 4xx (404 adds "check the model name and the base URL"), JSON instead of a stream; retryable: no; rein fails at once',
  quota: 'from 429 `insufficient_quota`, `billing_error`; retryable: no; rein fails at once (waiting will not help)',
  content_filter: 'from finish reason `content_filter`, stop reason `refusal`; retryable: no; rein fails',
  cancelled: 'from the session was cancelled or interrupted; retryable: no; rein —',
  script_exhausted: 'from the scripted or recorded provider has no turn for this call; retryable: no; rein fails',
  unknown: 'from a provider that threw; retryable: no; rein fails',
};

/** Every error-code family, in the order the reference lists them. */
export const errorCodeFamilies: readonly ErrorCodeFamily[] = [
  { layer: 'store', about: 'The event and blob stores (LevelDB, in-memory, PostgreSQL).', raisedAs: StoreError.name, source: 'stores/store-errors.ts', codes: storeCodes },
  { layer: 'host', about: 'The runtime, the library API and the CLI.', raisedAs: ReinError.name, source: 'src/host/host-errors.ts', codes: hostCodes },
  { layer: 'projection', about: 'Projections and the read-only commands built on them.', raisedAs: ProjectionError.name, source: 'src/projections/projection-errors.ts', codes: projectionCodes },
  { layer: 'inspect', about: 'The Stately inspector bridge (`rein inspect`).', raisedAs: InspectError.name, source: 'src/inspect/inspect-errors.ts', codes: inspectCodes },
  { layer: 'telemetry', about: 'OpenTelemetry export.', raisedAs: TelemetryError.name, source: 'src/telemetry/telemetry-errors.ts', codes: telemetryCodes },
  { layer: 'mcp', about: 'The `rein mcp` commands.', raisedAs: McpError.name, source: 'src/mcp/mcp-errors.ts', codes: mcpCodes },
  { layer: 'plugin', about: 'The plugin host and the hook kernel.', raisedAs: PluginError.name, source: 'src/plugins/plugin-errors.ts', codes: pluginCodes },
  { layer: 'serve', about: '`rein serve` and `createReinServer` (answered with an HTTP status).', raisedAs: ServeError.name, source: 'src/serve/serve-errors.ts', codes: serveCodes },
  { layer: 'memory', about: 'Memory governance (`rein memory`, `memory.*` records).', raisedAs: MemoryError.name, source: 'src/memory/memory-errors.ts', codes: memoryCodes },
  { layer: 'tool', about: 'Model-visible tool failures: observations the model reads, never errors that end a turn.', raisedAs: '`tool.settled` (`errorCode`)', source: 'models/tool.records.ts', codes: toolCodes },
  { layer: 'provider', about: 'Provider failures, each with a `retryable` flag; after the retry budget the session fails.', raisedAs: '`model.failed` / `model.attempted` (`error.code`)', source: 'models/model.records.ts', codes: providerCodes },
];
