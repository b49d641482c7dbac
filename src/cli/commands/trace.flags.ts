/* The flags of `rein trace`, shared by its declaration and its action without an import cycle. */
import type { CommonOptions } from '../command-options.js';

export interface TraceOptions extends CommonOptions {
  out?: string;
  eval?: string | boolean;
  format?: string;
  otlp?: string;
  raw?: boolean;
}
