/* The flags of `rein acp`, shared by its declaration and its action without an import cycle. */
import type { BudgetOptions, CapabilityFlags, PermissionOptions, PluginOptions, ProviderFlags } from '../command-options.js';

export interface AcpCommandOptions extends ProviderFlags, PermissionOptions, BudgetOptions, PluginOptions, CapabilityFlags {
  store?: string;
  relaxed?: boolean;
  /** `--no-memory` sets it false. */
  memory?: boolean;
}
