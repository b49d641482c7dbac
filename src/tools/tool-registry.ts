import { z } from 'zod';
import type { ModelToolDescription } from '../../models/model-contract.js';
import { fieldTypesOf, type FieldTypes } from '../policy/input-repair.js';
import type { AnyToolDefinition } from './tool.js';

interface Registered {
  tool: AnyToolDefinition;
  schema: Record<string, unknown>;
  fields: FieldTypes;
}

/**
 * Registered tools. Registration is not visibility: `describe(names)` projects only the tools visible this round,
 * and permission is decided later, per call. Each tool's JSON Schema is computed once, at registration.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Registered>();

  constructor(tools: readonly AnyToolDefinition[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: AnyToolDefinition): void {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is already registered`);
    const schema = z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>;
    this.tools.set(tool.name, { tool, schema, fields: fieldTypesOf(schema) });
  }

  get(name: string): AnyToolDefinition | undefined {
    return this.tools.get(name)?.tool;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The JSON Schema advertised for a tool's parameters. */
  schemaOf(name: string): Record<string, unknown> | undefined {
    return this.tools.get(name)?.schema;
  }

  /** The top-level parameter types of a tool, for input repair. */
  fieldTypesOf(name: string): FieldTypes {
    return this.tools.get(name)?.fields ?? new Map();
  }

  /** The model-facing description of each named tool, with its parameters as JSON Schema. */
  describe(names: readonly string[] = this.names()): ModelToolDescription[] {
    return names.flatMap((name) => {
      const registered = this.tools.get(name);
      if (!registered) return [];
      return [{ name, description: registered.tool.description, inputSchema: registered.schema }];
    });
  }
}
