import * as z from 'zod';
import { ReinError } from '../host/host-errors.js';

/** How a final answer fared against the session's output schema: its value, or the errors the model is shown. */
export type OutputCheck = { ok: true; value: unknown } | { ok: false; errors: string[] };

/** A session's output contract: the JSON Schema it records, and the check each final answer goes through. */
export interface OutputContract {
  /** What `session.created.output.schema` records (and the model is shown). */
  jsonSchema: Record<string, unknown>;
  check(text: string): OutputCheck;
}

/** At most this many validation errors are shown to the model and recorded. */
const maxErrors = 12;

/**
 * The JSON value a final answer holds: the whole text, or the inside of a single fenced block (```json … ```) the
 * model wrapped it in — nothing else is tolerated (an answer with prose around its JSON is not the typed answer).
 */
const parseAnswer = (text: string): { ok: true; value: unknown } | { ok: false; error: string } => {
  const trimmed = text.trim();
  const fenced = /^```[A-Za-z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  const body = fenced ? fenced[1]!.trim() : trimmed;
  if (body === '') return { ok: false, error: 'the answer is empty: it must be only a JSON value valid against the output schema' };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, error: `the answer is not JSON (${(error as Error).message}): it must be only a JSON value, without prose around it` };
  }
};

const issueText = (issue: z.core.$ZodIssue): string => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`;

const contractOf = (jsonSchema: Record<string, unknown>, schema: z.ZodType): OutputContract => ({
  jsonSchema,
  check(text) {
    const parsed = parseAnswer(text);
    if (!parsed.ok) return { ok: false, errors: [parsed.error] };
    const result = schema.safeParse(parsed.value);
    if (result.success) return { ok: true, value: result.data };
    const errors = result.error.issues.map(issueText);
    return { ok: false, errors: errors.length > maxErrors ? [...errors.slice(0, maxErrors), `… and ${errors.length - maxErrors} more`] : errors };
  },
});

/**
 * The contract of a JSON Schema (`rein run --output-schema <file>`, or the schema a session recorded when it is
 * resumed): answers are checked against it as zod reads it (`z.fromJSONSchema`). A schema that is not an object, or
 * that zod cannot read, is `OUTPUT_SCHEMA_INVALID`.
 */
export const outputFromJsonSchema = (jsonSchema: unknown, source = 'the output schema'): OutputContract => {
  if (typeof jsonSchema !== 'object' || jsonSchema === null || Array.isArray(jsonSchema)) throw new ReinError('OUTPUT_SCHEMA_INVALID', `${source} must be a JSON Schema object`);
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType;
  } catch (error) {
    throw new ReinError('OUTPUT_SCHEMA_INVALID', `${source} is not a JSON Schema rein can check answers against: ${(error as Error).message}`, { cause: error });
  }
  return contractOf(jsonSchema as Record<string, unknown>, schema);
};

/**
 * The contract of a zod schema (`createSession({ output })`): answers are checked by the schema itself (its
 * refinements included), and its JSON Schema is what the session records and the model is shown.
 */
export const outputFromZod = (schema: z.ZodType): OutputContract => {
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch (error) {
    throw new ReinError('OUTPUT_SCHEMA_INVALID', `createSession({ output }): the schema cannot be shown to the model as a JSON Schema: ${(error as Error).message}`, { cause: error });
  }
  return contractOf(jsonSchema, schema);
};

/** What the model reads about its final answer: the schema it must satisfy. */
export const outputInstruction = (jsonSchema: Record<string, unknown>): string =>
  `When you are done, give your final answer (a reply without tool calls) as only a JSON value valid against this JSON Schema — no prose around it:\n${JSON.stringify(jsonSchema)}`;
