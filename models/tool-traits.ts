/*
 * What a tool is, as the permission policy and the scheduler read it: the lowest room, so the tools (which define
 * them) and the policy (which decides by them) both import them from here and neither imports the other for them.
 */

/** MCP-style hints about a tool's behaviour; permission rules and the scheduler read them. */
export interface ToolAnnotations {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
  requiresConfirmation: boolean;
}

/** The broad capability a tool exercises; permission modes group tools by it. */
export type ToolRisk = 'read' | 'write' | 'execute' | 'network' | 'delegate';
