/* The flags of `rein verify`, shared by its declaration and its action without an import cycle. */
import type { CommonOptions } from '../command-options.js';

/** Options of `rein verify`. */
export interface VerifyOptions extends CommonOptions {
  all?: boolean;
}
