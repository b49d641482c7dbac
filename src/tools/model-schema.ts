/**
 * Keywords a tool's zod parameters put in their JSON Schema that only validate: sizes, formats and ranges the tool boundary
 * checks anyway (`tool.parameters.safeParse` before a call runs, its issues reported to the model as `InvalidInput`).
 * Shown to the model they cost tokens on every request and rarely change what it sends.
 */
const validationOnly = new Set(['$schema', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']);

/** Keywords whose value is one subschema, a list of them, or a map of them (the places a schema nests schemas). */
const oneSchema = new Set(['items', 'not', 'contains', 'additionalItems', 'propertyNames', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties']);
const schemaList = new Set(['oneOf', 'anyOf', 'allOf', 'prefixItems']);
const schemaMap = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** The JSON Schema type name of a JSON value (`integer` for whole numbers). */
const jsonType = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const shown = (schema: unknown): unknown => {
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  // A scalar `type` next to an `enum` or `const` of values of that type says nothing more.
  const fixed = 'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined;
  const redundantType = fixed !== undefined && fixed.length > 0 && typeof schema.type === 'string' && fixed.every((value) => jsonType(value) === schema.type);
  for (const [key, value] of Object.entries(schema)) {
    if (validationOnly.has(key)) continue;
    if (key === 'type' && redundantType) continue;
    if (key === 'additionalProperties') {
      // `false` only rejects unknown fields (the strict zod object does that, and input repair renames known slips);
      // a schema for the extra values says what they hold and stays.
      if (value !== false) out[key] = shown(value);
      continue;
    }
    if (oneSchema.has(key)) out[key] = Array.isArray(value) ? value.map(shown) : shown(value);
    else if (schemaList.has(key) && Array.isArray(value)) out[key] = value.map(shown);
    else if (schemaMap.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, shown(inner)]));
    else out[key] = value;
  }
  return out;
};

/**
 * The JSON Schema a tool's parameters are shown to the model as: the schema derived from its zod parameters without
 * the keywords that only validate (`$schema`, `additionalProperties: false`, `minLength`/`maxLength`,
 * `minItems`/`maxItems`, `pattern`, numeric bounds) and without a scalar `type` its `enum` or `const` already fixes.
 * Enums, constants, defaults, required fields and descriptions stay (a bound the model needs to know belongs in the
 * description). What a call sends is still validated against the full
 * zod schema at the tool boundary, and a failure comes back to the model as an `InvalidInput` result naming the
 * field. Values (`enum`, `const`, `default`, `required`) are copied as they are, and property names are never taken
 * for keywords (a parameter may be called `pattern`). Pure; the result shares no object with `schema`.
 */
export const modelFacingSchema = (schema: Record<string, unknown>): Record<string, unknown> => shown(schema) as Record<string, unknown>;
