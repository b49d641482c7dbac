import type { ResumePolicy } from '../../models/effect.records.js';
import { ToolErrorCode } from '../../models/tool.records.js';
import type { ToolAnnotations, ToolRisk } from '../../models/tool-traits.js';
import type { SideEffectClass, ToolResult } from './tool-result.js';

/** What the permission policy, the scheduler and resume read about a tool, as `defineTool` fills it in. */
export interface ToolTraits {
  annotations: ToolAnnotations;
  risk: ToolRisk;
  sideEffect: SideEffectClass;
  resumePolicy: ResumePolicy;
}

const sideEffectOfRisk: Record<ToolRisk, SideEffectClass> = { read: 'read', write: 'workspace-write', execute: 'process', network: 'network', delegate: 'process' };

/**
 * The traits of a tool that declares only some of them (`defineTool`'s short form, a plugin's tool). The defaults are
 * the careful ones: a tool that says nothing is taken to act outside the workspace (`risk: 'network'`,
 * `sideEffect: 'external-write'`, as an MCP tool that is not read-only is), so the default mode asks before it runs,
 * plan mode hides it, it never runs beside another call, and a call a crash left in doubt waits for a person
 * (`require-user-confirmation`). `readOnly: true` (or `risk: 'read'`) makes it a reader: run without asking, in
 * parallel with other readers, and rerun after a crash. What a tool declares always wins.
 */
export const toolTraitsOf = (declared: { risk?: ToolRisk; readOnly?: boolean; sideEffect?: SideEffectClass; resumePolicy?: ResumePolicy; annotations?: Partial<ToolAnnotations> }): ToolTraits => {
  const readOnly = declared.annotations?.readOnly ?? declared.readOnly ?? declared.risk === 'read';
  const risk: ToolRisk = declared.risk ?? (readOnly ? 'read' : 'network');
  const undeclared = declared.risk === undefined && !readOnly;
  return {
    annotations: {
      readOnly,
      destructive: !readOnly && (undeclared || risk === 'write' || risk === 'execute'),
      idempotent: readOnly,
      openWorld: risk === 'network',
      requiresConfirmation: false,
      ...declared.annotations,
    },
    risk,
    sideEffect: declared.sideEffect ?? (undeclared ? 'external-write' : sideEffectOfRisk[risk]),
    // rein cannot check what such a tool changed: a call in doubt waits for confirmation unless it only reads.
    resumePolicy: declared.resumePolicy ?? (readOnly ? 'rerun-after-check' : 'require-user-confirmation'),
  };
};

/** What a tool's `execute` may resolve with: a `ToolResult`, or plain text, or any JSON value (shown as JSON). */
export type ToolReturn = ToolResult | string | number | boolean | null | undefined | object;


/**
 * The `ToolResult` a tool's return value stands for: a result as it is (`{ ok: true, output }`, or `{ ok: false,
 * message }` — a code that is not a tool error code becomes `ToolFailed`); a string as the output the model reads;
 * `undefined` as an empty output; anything else as its JSON text. A value JSON cannot hold (a cycle, a BigInt) is a
 * `ToolFailed` the model reads, naming the tool.
 */
export const toolResultOf = (value: unknown, tool: string): ToolResult => {
  if (typeof value === 'string') return { ok: true, output: value };
  if (value === undefined) return { ok: true, output: '' };
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  if (record?.ok === true && typeof record.output === 'string') return value as ToolResult;
  if (record?.ok === false && typeof record.message === 'string') return ToolErrorCode.safeParse(record.code).success ? (value as ToolResult) : { ...(value as object), ok: false, code: 'ToolFailed', message: record.message } as ToolResult;
  try {
    const text = JSON.stringify(value, null, 2);
    if (text !== undefined) return { ok: true, output: text };
  } catch {
    // Falls through to the failure below.
  }
  return { ok: false, code: 'ToolFailed', message: `${tool} returned a value that cannot be shown as text or JSON` };
};
