import { createHash } from 'node:crypto';
import type { ModelToolDescription } from '../../models/model-contract.js';

/**
 * The endpoint as it may appear in records and messages: origin and path only. Credentials in the URL
 * (`https://user:key@host`), the query and the fragment are dropped, and a trailing slash is trimmed.
 */
export const displayEndpoint = (baseUrl: string): string => {
  try {
    const url = new URL(baseUrl);
    return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return '(invalid URL)';
  }
};

/** Join a base URL and a path without doubling or losing slashes; the base URL's query string is kept. */
export const joinUrl = (baseUrl: string, path: string): string => {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return url.toString();
};

/**
 * A core call id (`root:e3.0`) as a vendor tool-call id. Vendors restrict ids (Anthropic: `[a-zA-Z0-9_-]+`; OpenAI:
 * at most 40 characters), so other characters become `_` and long ids are shortened with a hash. Deterministic,
 * so an assistant tool call and its result always carry the same id.
 */
export const wireCallId = (callId: string): string => {
  const safe = callId.replace(/[^A-Za-z0-9_-]/g, '_');
  if (safe.length <= 40) return safe;
  return `${safe.slice(0, 27)}_${createHash('sha256').update(callId).digest('hex').slice(0, 12)}`;
};

/** A tool's JSON Schema as vendors accept it: the `$schema` marker removed, an object schema guaranteed. */
export const wireSchema = (tool: ModelToolDescription): Record<string, unknown> => {
  const { $schema: _marker, ...schema } = tool.inputSchema;
  return schema.type === undefined ? { type: 'object', properties: {}, ...schema } : schema;
};

/**
 * A token count as an endpoint sent it, if it is one: a whole number from 0 up. A string (`"5000"`), a fraction, a
 * negative or a huge value is not taken (the caller then charges rein's own estimate), so a usage record always holds
 * counts and a summary never concatenates them.
 */
export const tokenCount = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined);
