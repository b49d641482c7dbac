import type { z } from 'zod';
import type { ResumePolicy } from '../../models/effect.records.js';
import type { ToolErrorCode } from '../../models/tool.records.js';
import type { BlobStore } from '../../stores/blob-store.js';
import type { Workspace } from './workspace.js';

/** MCP-style hints about a tool's behaviour; permission rules and the scheduler read them. */
export interface ToolAnnotations {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
  requiresConfirmation: boolean;
}

/** What running a tool can change outside the session, from harmless to irreversible. */
export type SideEffectClass = 'none' | 'read' | 'workspace-write' | 'process' | 'network' | 'external-write';

/** The broad capability a tool exercises; permission modes group tools by it. */
export type ToolRisk = 'read' | 'write' | 'execute' | 'network' | 'delegate';

/** A tool's terminal result: success text (what the model reads) or a model-visible failure. */
export type ToolResult =
  | { ok: true; output: string; data?: unknown }
  | { ok: false; code: ToolErrorCode; message: string };

/** Everything a tool may touch while it runs. Tools never reach the store or the machines directly. */
export interface ToolContext {
  sessionId: string;
  callId: string;
  workspace: Workspace;
  blobs: BlobStore;
  signal: AbortSignal;
  /** Per-session memory of what the model has read (content hashes), used by edits to refuse stale baselines. */
  readBaselines: Map<string, string>;
}

/** One way to define a tool: name, description, zod parameters (advertised as JSON Schema), classes, execute. */
export interface ToolDefinition<Parameters = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: z.ZodType<Parameters>;
  annotations: ToolAnnotations;
  risk: ToolRisk;
  sideEffect: SideEffectClass;
  resumePolicy: ResumePolicy;
  /** Must not throw for bad input or a missing file: return a model-visible failure instead. */
  execute(args: Parameters, context: ToolContext): Promise<ToolResult>;
}

/** A tool definition with its parameter type erased, as the registry holds it. */
export type AnyToolDefinition = ToolDefinition<any>;

/** Identity helper that checks a tool definition against its parameter schema. */
export const defineTool = <Parameters>(definition: ToolDefinition<Parameters>): ToolDefinition<Parameters> => definition;

export const readOnlyAnnotations: ToolAnnotations = Object.freeze({ readOnly: true, destructive: false, idempotent: true, openWorld: false, requiresConfirmation: false });
