import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import { ServeError } from './serve-errors.js';

/** What a route's handler gets: its parsed path parameters, query and body, and the raw request and response. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  request: IncomingMessage;
  response: ServerResponse;
}

/**
 * One route of the API: its method and OpenAPI path (`/api/sessions/{id}`), the schemas of what it takes and answers
 * (`/openapi.json` is generated from them), whether it changes state (refused by a read-only server, and only from
 * the page's own origin), and the handler. A handler that streams (`answer: 'stream'`) writes the response itself.
 */
export interface Route<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST';
  path: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  answer: R | { stream: string; description: string };
  /** The success status (200 unless said). */
  status?: number;
  changes: boolean;
  handle(input: RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<R extends z.ZodType ? z.infer<R> : void>;
}

/** Declare a route with its handler typed by its schemas (the answer's type is the response schema's). */
export const defineRoute = <P extends z.ZodType = z.ZodObject, Q extends z.ZodType = z.ZodObject, B extends z.ZodType = z.ZodObject, R extends z.ZodType = z.ZodType>(route: Route<P, Q, B, R>): Route => route as unknown as Route;

/** A route's path as a matcher: `{name}` segments become named groups. */
export const pathPattern = (path: string): RegExp => new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`);

const MAX_BODY = 1_000_000;

/** The request's JSON body (`{}` when empty); `SERVE_BAD_REQUEST` when it is not JSON, over 1 MB, or not sent as JSON. */
export const readJsonBody = async (request: IncomingMessage): Promise<unknown> => {
  let text = '';
  for await (const chunk of request) {
    text += String(chunk);
    if (text.length > MAX_BODY) throw new ServeError('SERVE_BAD_REQUEST', 'the request body is over 1 MB');
  }
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ServeError('SERVE_BAD_REQUEST', 'the request body is not JSON');
  }
};

/** Parse `value` with `schema`, or `SERVE_BAD_REQUEST` naming what is wrong (`where`: path, query or body). */
export const parseWith = <S extends z.ZodType>(schema: S | undefined, value: unknown, where: string): z.infer<S> => {
  if (!schema) return value as z.infer<S>;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ServeError('SERVE_BAD_REQUEST', `the ${where} is invalid${issue ? `: ${issue.path.join('.') || '(root)'} ${issue.message}` : ''}`);
};

/** Send `value` as JSON with `status`. */
export const sendJson = (response: ServerResponse, status: number, value: unknown): void => {
  const body = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  response.end(body);
};
