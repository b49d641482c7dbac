/* The flags of `rein resume`, shared by its declaration and its action without an import cycle. */
import type { CapabilityFlags, CommonOptions, PermissionOptions, PluginOptions, ProviderFlags } from '../command-options.js';

export interface ResumeCommandOptions extends CommonOptions, ProviderFlags, PermissionOptions, PluginOptions, CapabilityFlags {
  yes?: boolean;
  /** `--confirm <effectId>` (repeatable): rerun these in-doubt calls, and nothing more. */
  confirm?: string[];
  otlp?: string;
  /** `--no-memory` sets it false. */
  memory?: boolean;
  /** `--max-cost <usd>`: the cost budget from here on (replaces the recorded one). */
  maxCost?: string;
  /** `--max-turns <n>`: the raised turn budget of a session that ended `budget-exhausted` or was interrupted (above the turns taken). */
  maxTurns?: string;
  /** `--max-tool-calls <n>`: the raised tool-call budget (above the calls made). */
  maxToolCalls?: string;
  /** `--max-tokens <n>`: the raised token budget (above the tokens used). */
  maxTokens?: string;
  /** `--max-wall-time <ms>`: the raised wall-time budget (above the time since the session started). */
  maxWallTime?: string;
}
