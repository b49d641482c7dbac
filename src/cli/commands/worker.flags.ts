/* The flags of `rein worker`, shared by its declaration and its action without an import cycle. */
import type { CommonOptions } from '../command-options.js';

export interface WorkerCommandOptions extends CommonOptions {
  concurrency?: string;
  leaseMs?: string;
  exitWhenIdle?: string;
}
