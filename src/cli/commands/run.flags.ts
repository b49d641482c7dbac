/* The flags of `rein run`, shared by its declaration and its action without an import cycle. */
import type { BudgetOptions, CapabilityFlags, CommonOptions, PermissionOptions, PluginOptions, ProviderFlags } from '../command-options.js';

export interface RunOptions extends CommonOptions, BudgetOptions, ProviderFlags, PermissionOptions, PluginOptions, CapabilityFlags {
  inspect?: string | boolean;
  detach?: boolean;
  otlp?: string;
  /** `--no-memory` sets it false. */
  memory?: boolean;
  /** A JSON Schema file the final answer must validate against. */
  outputSchema?: string;
}
