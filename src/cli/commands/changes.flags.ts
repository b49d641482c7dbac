/* The flags of `rein diff` and `rein rewind`, shared by their declaration and their action without a cycle. */
import type { CommonOptions } from '../command-options.js';

/** `rein diff` options. */
export interface DiffFlags extends CommonOptions {
  at?: string;
  call?: string;
  stat?: boolean;
  net?: boolean;
}

/** `rein rewind` options. */
export interface RewindFlags extends CommonOptions {
  to: string;
  code?: boolean;
  conversation?: boolean;
  yes?: boolean;
  force?: boolean;
}
