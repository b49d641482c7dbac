/* The flags of `rein context`, shared by its declaration and its action without an import cycle. */
import type { CommonOptions } from '../command-options.js';

export interface ContextOptions extends CommonOptions {
  turn?: string;
  actor?: string;
  attempt?: string;
}
