/* The flags of `rein serve`, shared by its declaration and its action without an import cycle. */
import type { CapabilityFlags, CommonOptions, PermissionOptions, PluginOptions, ProviderFlags } from '../command-options.js';

export interface ServeOptions extends CommonOptions, ProviderFlags, PermissionOptions, PluginOptions, CapabilityFlags {
  port?: string;
  readOnly?: boolean;
  open?: boolean;
}
