/* The flags of `rein approve`, shared by its declaration and its action without an import cycle. */
import type { CommonOptions } from '../command-options.js';

export interface ApproveOptions extends CommonOptions {
  deny?: boolean;
  reason?: string;
}
