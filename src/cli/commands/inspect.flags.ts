/* The flags of `rein inspect`, shared by its declaration and its action without an import cycle. */
import type { CommonOptions } from '../command-options.js';

export interface InspectOptions extends CommonOptions {
  url?: string;
  serve?: string | boolean;
}

/** The inspector URL `rein inspect` and `rein run --inspect` use when none is given. */
export const defaultInspectorUrl = 'ws://127.0.0.1:8080';
