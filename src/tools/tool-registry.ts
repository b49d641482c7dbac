import * as z from 'zod';
import type { ModelToolDescription } from '../../models/model-contract.js';
import { fieldTypesOf, type FieldTypes } from '../policy/input-repair.js';
import type { AnyToolDefinition } from './tool.js';
import { ReinError } from '../host/host-errors.js';
import { modelFacingSchema } from './model-schema.js';

interface Registered {
  tool: AnyToolDefinition;
  schema: Record<string, unknown>;
  fields: FieldTypes;
}

/**
 * Each tool definition's JSON Schema and field types, computed once per definition: definitions are immutable and
 * shared by every session of a process (a worker builds a registry per session; converting the built-in tools' zod
 * schemas took ~40 ms of its CPU per session). Schemas are read, never changed, by whoever holds them.
 */
const registrations = new WeakMap<AnyToolDefinition, Registered>();

const registered = (tool: AnyToolDefinition): Registered => {
  let entry = registrations.get(tool);
  if (!entry) {
    // A schema derived from zod parameters is shown without its validation-only keywords (the parameters still
    // validate every call); a schema a tool advertises itself (an MCP server's) is shown as the server wrote it.
    const schema =
      tool.inputSchema ?? modelFacingSchema(z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>);
    entry = { tool, schema, fields: fieldTypesOf(schema) };
    registrations.set(tool, entry);
  }
  return entry;
};

/**
 * Registered tools. Registration is not visibility: `describe(names)` projects only the tools visible this round,
 * and permission is decided later, per call. Each tool's JSON Schema is computed once, at registration, as the model
 * is shown it (`modelFacingSchema`: without validation-only keywords), or taken as the tool advertises it, for MCP
 * tools. A registry may sit on a `parent`: it sees the parent's tools (as they are
 * now, MCP tools coming and going included) unless it registers one of the same name.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Registered>();
  private readonly parent: ToolRegistry | undefined;

  constructor(tools: readonly AnyToolDefinition[] = [], options: { parent?: ToolRegistry } = {}) {
    this.parent = options.parent;
    for (const tool of tools) this.register(tool);
  }

  register(tool: AnyToolDefinition): void {
    if (this.tools.has(tool.name)) throw new ReinError('CONFIG_INVALID', `tool ${tool.name} is already registered: two tools cannot share a name`);
    this.tools.set(tool.name, registered(tool));
  }

  /** Register a tool, replacing one of the same name (an MCP server that changed a tool). */
  replace(tool: AnyToolDefinition): void {
    this.tools.set(tool.name, registered(tool));
  }

  /** Forget a tool (an MCP server that no longer lists it). */
  unregister(name: string): void {
    this.tools.delete(name);
  }

  private entry(name: string): Registered | undefined {
    return this.tools.get(name) ?? this.parent?.entry(name);
  }

  get(name: string): AnyToolDefinition | undefined {
    return this.entry(name)?.tool;
  }

  names(): string[] {
    if (!this.parent) return [...this.tools.keys()];
    return [...new Set([...this.parent.names(), ...this.tools.keys()])];
  }

  /** The JSON Schema advertised for a tool's parameters. */
  schemaOf(name: string): Record<string, unknown> | undefined {
    return this.entry(name)?.schema;
  }

  /** The top-level parameter types of a tool, for input repair. */
  fieldTypesOf(name: string): FieldTypes {
    return this.entry(name)?.fields ?? new Map();
  }

  /** The model-facing description of each named tool, with its parameters as JSON Schema. */
  describe(names: readonly string[] = this.names()): ModelToolDescription[] {
    return names.flatMap((name) => {
      const found = this.entry(name);
      if (!found) return [];
      return [{ name, description: found.tool.description, inputSchema: found.schema }];
    });
  }
}
