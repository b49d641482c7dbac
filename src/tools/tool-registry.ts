import { z } from 'zod';
import type { ModelToolDescription } from '../../models/model-contract.js';
import type { AnyToolDefinition } from './tool.js';

/**
 * Registered tools. Registration is not visibility: `describe(names)` projects only the tools visible this round,
 * and permission is decided later, per call.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyToolDefinition>();

  constructor(tools: readonly AnyToolDefinition[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: AnyToolDefinition): void {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is already registered`);
    this.tools.set(tool.name, tool);
  }

  get(name: string): AnyToolDefinition | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The model-facing description of each named tool, with its parameters as JSON Schema. */
  describe(names: readonly string[] = this.names()): ModelToolDescription[] {
    return names.flatMap((name) => {
      const tool = this.tools.get(name);
      if (!tool) return [];
      return [{ name: tool.name, description: tool.description, inputSchema: z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown> }];
    });
  }
}
