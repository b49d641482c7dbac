import type { SessionCreated } from '../../models/session.records.js';
import { ActorTree } from './actor-tree.js';
import { InterpretedTree, type MachineTree } from './machine-tree.js';
import type { DerivedDraft } from './step-record.js';

/** Options of a session's tree: `inspect` receives every XState inspection event (the Stately inspector, live). */
export interface TreeOptions {
  inspect?: (event: unknown) => void;
  /**
   * Whether the interpreted tree runs the compiled form of the machines (compiled-machine.ts; the default) or xstate's
   * own `transition` (false: the oracle the compiled form is tested against, and the baseline of the machine-tree bench).
   */
  compiled?: boolean;
}

/**
 * Build a session's tree for `session.created`, with the records its initial transition produced: the interpreted
 * tree, or — when something inspects — the running tree, whose inspection stream the inspector reads.
 */
export const createSessionTree = (created: SessionCreated, options: TreeOptions = {}): { tree: MachineTree; drafts: DerivedDraft[] } =>
  options.inspect ? ActorTree.create(created, { inspect: options.inspect }) : InterpretedTree.create(created, options.compiled === undefined ? {} : { compiled: options.compiled });

/** Rebuild a session's tree from a persisted snapshot (either tree's): interpreted, or running when something inspects. */
export const restoreSessionTree = (persisted: unknown, options: TreeOptions = {}): MachineTree =>
  options.inspect ? ActorTree.restore(persisted, { inspect: options.inspect }) : InterpretedTree.restore(persisted, options.compiled === undefined ? {} : { compiled: options.compiled });
