import * as z from 'zod';
import { createRequire } from 'node:module';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';

/** The MCP SDK's ajv validator, loaded on the first MCP tool (a host without MCP servers never loads the SDK). */
let shared: AjvJsonSchemaValidator | undefined;
const validatorOf = (): AjvJsonSchemaValidator => {
  if (shared) return shared;
  const { AjvJsonSchemaValidator: Validator } = createRequire(import.meta.url)('@modelcontextprotocol/client/validators/ajv') as typeof import('@modelcontextprotocol/client/validators/ajv');
  return (shared = new Validator());
};

/** One problem ajv found, split out of its message (`data/a must be number` → path `a`). */
const issuesOf = (message: string): Array<{ path: PropertyKey[]; message: string }> =>
  message
    .split(/, (?=data[/ ])/)
    .map((part) => {
      const match = /^data((?:\/[^ ]*)?) (.*)$/s.exec(part);
      if (!match) return { path: [], message: part };
      const path = match[1] ? match[1].slice(1).split('/').map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~')) : [];
      return { path: path.map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment)), message: match[2]! };
    });

/**
 * A zod schema that validates arguments against an MCP tool's JSON Schema with the SDK's ajv engine (the schema's
 * own dialect, formats checked), so the tool pipeline validates an MCP tool exactly as it validates a built-in one:
 * the arguments pass unchanged, or every problem becomes an issue with its field path. Throws when the schema cannot
 * be compiled (the caller reports that tool and skips it). Only object schemas are accepted (MCP requires them).
 */
export const mcpParameters = (schema: Record<string, unknown>): z.ZodType<Record<string, unknown>> => {
  if (schema.type !== 'object') throw new Error(`its input schema is not an object schema (type ${JSON.stringify(schema.type)})`);
  const validate = validatorOf().getValidator<Record<string, unknown>>(schema as never);
  // Compile now: a broken schema is reported when the server lists the tool, not when the model calls it.
  validate({});
  return z.record(z.string(), z.unknown()).superRefine((value, context) => {
    const result = validate(value);
    if (result.valid) return;
    for (const issue of issuesOf(result.errorMessage)) context.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
};
