import { ReinError } from '../../models/rein-error.js';

/** Stable codes of plugin and hook errors; README lists each one. */
export type PluginErrorCode =
  | 'PLUGIN_MANIFEST_INVALID'
  | 'PLUGIN_HOST_VERSION'
  | 'PLUGIN_PERMISSION_DENIED'
  | 'PLUGIN_UNTRUSTED'
  | 'PLUGIN_SOURCE_REFUSED'
  | 'PLUGIN_LOAD_FAILED'
  | 'PLUGIN_CONFIG_INVALID'
  | 'PLUGIN_SETUP_FAILED'
  | 'PLUGIN_CONTRIBUTION_INVALID'
  | 'PLUGIN_CONFLICT'
  | 'PLUGIN_STOP_FAILED'
  | 'PLUGIN_NOT_FOUND'
  | 'PLUGIN_FOLDER_INVALID'
  | 'HOOK_CONFIG_INVALID'
  | 'HOOK_UNTRUSTED'
  | 'PROMPT_BLOCKED';

/** An error of the plugin host or the hook kernel: a stable `code` and the underlying `cause`. */
export class PluginError extends ReinError<PluginErrorCode> {
  constructor(code: PluginErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'PluginError';
  }
}
