/* The flags of `rein sandbox`, shared by its declaration and its action without an import cycle. */
import type { SandboxOptions } from '../command-options.js';

export interface SandboxCommandOptions extends SandboxOptions {
  workspace?: string;
  store?: string;
  json?: boolean;
}
