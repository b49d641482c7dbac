import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { modelFacingSchema } from '../../src/tools/model-schema.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { defineTool } from '../../src/tools/tool.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

const validationOnly = ['$schema', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];

/** Every keyword used at a schema position (property names are names, not keywords; enum/const/default are values). */
const keywordsOf = (schema: unknown, into: string[] = []): string[] => {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return into;
  for (const [key, value] of Object.entries(schema)) {
    into.push(key === 'additionalProperties' && value === false ? 'additionalProperties:false' : key);
    if (key === 'properties' || key === '$defs') for (const inner of Object.values(value as object)) keywordsOf(inner, into);
    else if (key === 'items' || key === 'additionalProperties' || key === 'not') keywordsOf(value, into);
    else if (key === 'oneOf' || key === 'anyOf' || key === 'allOf') for (const inner of value as unknown[]) keywordsOf(inner, into);
  }
  return into;
};

describe('the tool schemas the model is shown', () => {
  it('carry no validation-only keyword, for every built-in tool, and keep its properties, required fields, enums and defaults', () => {
    const registry = new ToolRegistry(builtinTools({ applyPatch: true }));
    for (const tool of registry.describe()) {
      const full = z.toJSONSchema(registry.get(tool.name)!.parameters, { io: 'input' }) as Record<string, unknown>;
      const shown = keywordsOf(tool.inputSchema);
      for (const keyword of [...validationOnly, 'additionalProperties:false']) expect(shown, `${tool.name} shows ${keyword}`).not.toContain(keyword);
      expect(Object.keys(tool.inputSchema.properties as object), tool.name).toEqual(Object.keys(full.properties as object));
      expect(tool.inputSchema.required, tool.name).toEqual(full.required);
    }
    const grep = registry.describe(['grep'])[0]!.inputSchema as { properties: Record<string, Record<string, unknown>> };
    // A parameter named like a keyword stays; its default stays.
    expect(grep.properties.pattern).toEqual({ type: 'string' });
    expect(grep.properties.max_matches).toEqual({ default: 100, type: 'integer' });
    const memory = registry.describe(['memory_write'])[0]!.inputSchema as { properties: Record<string, Record<string, unknown>> };
    expect(memory.properties.kind).toEqual({ enum: ['user_preference', 'project_fact', 'task_experience', 'procedure_rule'] });
  });

  it('keeps what is not a validation-only keyword: a schema for extra properties, a type an enum does not fix, nested schemas', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        pattern: { type: 'string', pattern: '^a', minLength: 1 },
        labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 5 } },
        mixed: { type: 'string', enum: ['a', 1] },
        count: { type: 'integer', enum: [1, 2], maximum: 9 },
        either: { anyOf: [{ type: 'string', const: 'x' }, { type: 'array', items: { type: 'number', minimum: 0 }, maxItems: 3 }] },
      },
      required: ['pattern'],
      additionalProperties: false,
    };
    expect(modelFacingSchema(schema)).toEqual({
      type: 'object',
      properties: {
        pattern: { type: 'string' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        mixed: { type: 'string', enum: ['a', 1] },
        count: { enum: [1, 2] },
        either: { anyOf: [{ const: 'x' }, { type: 'array', items: { type: 'number' } }] },
      },
      required: ['pattern'],
    });
    // The input is left as it was.
    expect(schema.properties.pattern).toEqual({ type: 'string', pattern: '^a', minLength: 1 });
  });

  it('a schema a tool advertises itself (an MCP server\'s) is shown as it was written', () => {
    const advertised = { type: 'object', properties: { q: { type: 'string', maxLength: 10 } }, additionalProperties: false };
    const tool = defineTool({ name: 'remote', description: 'r', parameters: z.object({ q: z.string() }), inputSchema: advertised, annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: true, requiresConfirmation: false }, risk: 'read', sideEffect: 'read', resumePolicy: 'rerun-after-check', execute: async () => ({ ok: true, output: '' }) });
    expect(new ToolRegistry([tool]).describe()[0]!.inputSchema).toBe(advertised);
  });

  it('is idempotent, and never drops a property or changes an enum, const or default (arbitrary zod objects)', () => {
    const leaf = fc.oneof(
      fc.constant(z.string().min(1).max(20)),
      fc.constant(z.string().regex(/^[a-z]+$/)),
      fc.constant(z.number().int().min(0).max(10)),
      fc.constant(z.enum(['a', 'b'])),
      fc.constant(z.literal('k')),
      fc.constant(z.array(z.string()).min(1).max(3)),
      fc.constant(z.boolean().default(false)),
    );
    const name = fc.constantFrom('pattern', 'minimum', 'items', 'type', 'enum', 'path', 'a');
    fc.assert(
      fc.property(fc.dictionary(name, fc.tuple(leaf, fc.boolean()), { minKeys: 1, maxKeys: 5 }), (fields) => {
        const parameters = z.object(Object.fromEntries(Object.entries(fields).map(([key, [schema, optional]]) => [key, optional ? schema.optional() : schema]))).strict();
        const full = z.toJSONSchema(parameters, { io: 'input' }) as { properties: Record<string, Record<string, unknown>>; required?: string[] };
        const shown = modelFacingSchema(full) as typeof full;
        expect(modelFacingSchema(shown)).toEqual(shown);
        expect(Object.keys(shown.properties)).toEqual(Object.keys(full.properties));
        expect(shown.required).toEqual(full.required);
        for (const [key, property] of Object.entries(full.properties)) {
          for (const kept of ['enum', 'const', 'default', 'description']) expect(shown.properties[key]![kept]).toEqual(property[kept]);
        }
        for (const keyword of [...validationOnly, 'additionalProperties:false']) expect(keywordsOf(shown)).not.toContain(keyword);
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});

describe('what the shown schema leaves out is still enforced at the tool boundary', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  beforeAll(async () => {
    workspace = await makeTempDir('rein-model-schema-');
    harness = await toolHarness(workspace.path);
  });
  afterAll(async () => {
    await workspace.remove();
  });

  it.each([
    ['read', { path: 'a.txt', offset: 0 }, 'offset'],
    ['read', { path: '' }, 'path'],
    ['read', { path: 'a.txt', extra: 1 }, 'extra'],
    ['update_plan', { plan: [{ step: 'x'.repeat(501), status: 'pending' }] }, 'step'],
    ['edit_lines', { path: 'a.txt', ops: [{ op: 'delete_line', tag: 'not-a-tag' }] }, 'tag'],
    ['memory_read', { limit: 51 }, 'limit'],
  ])('%s %j is refused as InvalidInput naming the field', async (name, args, field) => {
    const result = await harness.run(name, args);
    expect(result.errorCode).toBe('InvalidInput');
    expect(result.observation).toContain(field);
  });
});
