/*
 * What a tool gives back — its result, a model-visible failure, the files it touched — as types alone, so the helpers
 * that build results (tool-defaults.ts) and the tool contract (tool.ts) share them without importing each other.
 */
import type { Provenance } from '../../models/turn.records.js';
import type { CommandExecution, ToolErrorCode } from '../../models/tool.records.js';
import type { ArtifactRef } from '../../stores/blob-store.js';

/** What running a tool can change outside the session, from harmless to irreversible. */
export type SideEffectClass = 'none' | 'read' | 'workspace-write' | 'process' | 'network' | 'external-write';


/** A model-visible failure. `reason` is the validation code the pipeline records (`stale_file_baseline`, …). */
export interface ToolFailure {
  ok: false;
  code: ToolErrorCode;
  message: string;
  reason?: string;
  artifacts?: ArtifactRef[];
  provenance?: Provenance;
  /** A command that ran and then failed (timed out, was cancelled): how it ended. */
  execution?: CommandExecution;
  /** Facts the tool observed while it ran (recorded with the call's settlement, failed or not). */
  notes?: ToolNote[];
  /** The class of the error the tool threw (`TypeError`, a host's own class), when the failure is a throw. */
  errorClass?: string;
}

/** A file a tool read or wrote: its workspace-relative path and content hash become the session's baseline. */
export interface FileAccess {
  path: string;
  hash: string;
  access: 'read' | 'write';
  /** For writes: the hash the file had before, or null for a new file. */
  before?: string | null;
}

/**
 * A tool's terminal result: success text (what the model reads) or a model-visible failure. `provenance` is the
 * runtime boundary evidence (a shell tool must give it); `execution` is the command a tool ran and how it ended
 * (its exit code is what makes a verification pass or fail: a tool that runs a command must report it);
 * `value` is a structured result a machine reads
 * (`tool.settled.value`); `settleWith` means the call does not settle now: its effect settles with that input
 * record instead, and the call's terminal result comes later from a machine (`delegate_task`); `facts` are written
 * with the call's settling batch (`capability.loaded`).
 */
export type ToolResult =
  | { ok: true; output: string; data?: unknown; files?: FileAccess[]; artifacts?: ArtifactRef[]; provenance?: Provenance; execution?: CommandExecution; value?: Record<string, unknown>; settleWith?: { type: string; data: Record<string, unknown> }; notes?: ToolNote[] }
  | ToolFailure;

/** A fact runtime validation wants recorded (with the call's effect id, call id and corr), whatever it decides. */
export interface ToolNote {
  type: string;
  data: Record<string, unknown>;
}
