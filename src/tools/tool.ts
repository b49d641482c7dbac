import type * as z from 'zod';
import type { ToolAnnotations, ToolRisk } from '../../models/tool-traits.js';

export type { ToolAnnotations, ToolRisk } from '../../models/tool-traits.js';
import type { Provenance } from '../../models/turn.records.js';
import type { ResumePolicy } from '../../models/effect.records.js';
import type { EffectResumeCheck } from '../effects/effect.js';
import type { CommandExecution, InputRepair, ToolErrorCode } from '../../models/tool.records.js';
import type { ArtifactRef, BlobStore } from '../../stores/blob-store.js';
import type { PermissionSubject } from '../policy/permission-policy.js';
import type { SandboxPolicy } from '../policy/sandbox-policy.js';
import type { Workspace } from './workspace.js';
import type { ToolMemory } from './tool-memory.js';
import type { DelegationScope } from '../delegation/actor-rights.js';
import { toolResultOf, toolTraitsOf, type ToolReturn } from './tool-defaults.js';
import type { AgentCapabilities } from '../capabilities/agent-capability-types.js';


export type { SideEffectClass, ToolFailure, FileAccess, ToolResult, ToolNote } from './tool-result.js';
import type { SideEffectClass, ToolFailure, FileAccess, ToolResult, ToolNote } from './tool-result.js';

/**
 * The outcome of runtime validation: the plan `execute` will carry out, the subject permission rules match, the
 * intent recorded in `tool.started` (resume checks read it), and repairs made while validating — or a failure.
 */
export type Prepared<Plan> = ({ ok: true; plan: Plan; subject?: PermissionSubject; intent?: Record<string, unknown>; repairs?: InputRepair[] } | ToolFailure) & { notes?: ToolNote[] };

/** Everything a tool may touch while it runs. Tools never reach the store or the machines directly. */
export interface ToolContext {
  sessionId: string;
  callId: string;
  workspace: Workspace;
  blobs: BlobStore;
  /**
   * The call's cancellation. The host's is an accessor that makes the signal on its first read (most calls never
   * abort, and a tool that never looks costs none): a tool deriving a context of its own copies it explicitly.
   */
  signal: AbortSignal;
  /** The session's file baselines: workspace-relative path → BLAKE3 of the content last read or written. */
  baselines: ReadonlyMap<string, string>;
  /** Artifact refs this session has been shown; `read_artifact` reads only these. */
  artifacts: ReadonlySet<string>;
  sandbox: SandboxPolicy;
  /** Characters an observation may have before it is cut into an artifact; tools that can page (read) stay within it. */
  outputBudget: number;
  /** Stream a progress line to live subscribers (never persisted). */
  progress(message: string): void;
  /**
   * Record a fact about this call after it settled (`effectId` and `callId` are added): a background command's end.
   * Absent where nothing records. Resolves once it is written (or failed to be: a failure is not the call's), so the
   * session's end can wait for a stopped background command's record before it checks the workspace again.
   */
  recordLater?(type: string, data: Record<string, unknown>): Promise<void>;
  /** The session's governed memory (scoped reads, candidate proposals); absent when the harness runs without memory. */
  memory?: ToolMemory;
  /** The calling agent's rights and the delegation settings (absent where delegation is not wired). */
  delegation?: DelegationScope;
  /** The session's capabilities as the calling agent sees them (`tool_search`, `skill`); absent where not wired. */
  capabilities?: AgentCapabilities;
  /**
   * The commands the calling agent ran so far, each with its latest execution (keyed by `commandKey`): what a report
   * may claim ran. Absent where not wired (nothing ran, as far as a tool can tell).
   */
  executions?: ReadonlyMap<string, CommandExecution>;
  /** The status of the verification each command's latest run recorded (absent: that run was no test run). */
  verifications?: ReadonlyMap<string, string>;
}

/** What resume does with an in-doubt call of a `rerun-after-check` tool, decided from its recorded intent. */
export type ResumeCheck = EffectResumeCheck;

/**
 * One way to define a tool: name, description, zod parameters (advertised as JSON Schema), annotations, risk and
 * side-effect class, resume policy, an optional runtime validation (`prepare`) and `execute`.
 */
export interface ToolDefinition<Parameters = Record<string, unknown>, Plan = undefined> {
  name: string;
  description: string;
  parameters: z.ZodType<Parameters>;
  /** The JSON Schema the model is shown, when it is not derived from `parameters` (an MCP tool's, as advertised). */
  inputSchema?: Record<string, unknown>;
  annotations: ToolAnnotations;
  risk: ToolRisk;
  sideEffect: SideEffectClass;
  resumePolicy: ResumePolicy;
  /** The pipeline stops a call still running after this long with a `Timeout` observation. */
  timeoutMs?: number;
  /** Runtime validation against the current workspace, before permission is decided. Must not change anything. */
  prepare?(args: Parameters, context: ToolContext): Promise<Prepared<Plan>>;
  /** Must not throw for bad input or a missing file: return a model-visible failure instead. */
  execute(args: Parameters, context: ToolContext, plan: Plan): Promise<ToolResult>;
  /** For `rerun-after-check`: decide an in-doubt call from the intent its `tool.started` recorded (if any). */
  checkResume?(intent: Record<string, unknown> | undefined, context: { workspace: Workspace }): Promise<ResumeCheck>;
}

/** A tool definition with its parameter and plan types erased, as the registry holds it. */
export type AnyToolDefinition = ToolDefinition<any, any>;

/**
 * What `defineTool` takes: a `ToolDefinition` whose traits may be left out (the short form: `name`, `description`,
 * `parameters`, `execute`, and `readOnly` or `risk` when you know them) and whose `execute` may resolve with plain
 * text or any JSON value instead of a `ToolResult`. `toolTraitsOf` (tool-defaults.ts) says what each left-out trait
 * defaults to.
 */
export interface ToolSpec<Parameters = Record<string, unknown>, Plan = undefined> extends Omit<ToolDefinition<Parameters, Plan>, 'annotations' | 'risk' | 'sideEffect' | 'resumePolicy' | 'execute'> {
  /** A tool that only reads: runs without asking, beside other readers, and again after a crash (default false). */
  readOnly?: boolean;
  annotations?: Partial<ToolAnnotations>;
  risk?: ToolRisk;
  sideEffect?: SideEffectClass;
  resumePolicy?: ResumePolicy;
  /**
   * Run the call. Resolve with the text the model reads, any JSON value (shown as JSON), or a `ToolResult`. A thrown
   * error is a `ToolFailed` result the model reads (its class recorded), not a failure of the session.
   */
  execute(args: Parameters, context: ToolContext, plan: Plan): Promise<ToolReturn>;
}

/**
 * Define a tool. The short form — `defineTool({ name, description, parameters, execute })` — gets careful defaults for
 * what it leaves out (a tool that says nothing is asked for before it runs, runs alone, and a call a crash left in doubt
 * waits for a person; `readOnly: true` makes it a reader), and its `execute` may resolve with plain text or a JSON
 * value. The full form (annotations, risk, side effect, resume policy, `{ ok, output }` results) is taken as given.
 */
export const defineTool = <Parameters, Plan = undefined>(spec: ToolSpec<Parameters, Plan>): ToolDefinition<Parameters, Plan> => {
  const { readOnly: _readOnly, execute, ...rest } = spec;
  return {
    ...rest,
    ...toolTraitsOf(spec),
    // Not an async function around the tool's: one reaction per call (a throw still rejects, never escapes).
    execute: (args, context, plan) => {
      try {
        return Promise.resolve(execute(args, context, plan)).then((value) => toolResultOf(value, spec.name));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
};

/** A model-visible failure value. */
export const toolFailure = (code: ToolErrorCode, message: string, reason?: string): ToolFailure => ({ ok: false, code, message, ...(reason ? { reason } : {}) });

/** The annotations of a tool that only reads (no side effect, safe to repeat, nothing to confirm). */
export const readOnlyAnnotations: ToolAnnotations = Object.freeze({ readOnly: true, destructive: false, idempotent: true, openWorld: false, requiresConfirmation: false });
