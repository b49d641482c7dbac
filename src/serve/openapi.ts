import * as z from 'zod';
import { ErrorBody } from './api-schemas.js';
import type { Route } from './route-kit.js';

/** An OpenAPI 3.1 document (the parts rein writes). */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  security: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, unknown>>;
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/**
 * The OpenAPI 3.1 document of `routes`, generated from their zod schemas with `z.toJSONSchema` (JSON Schema 2020-12,
 * which OpenAPI 3.1 uses): every schema with an `id` in its metadata becomes a component, referenced where it is used.
 */
export const openApiDocument = (routes: readonly Route[], version: string): OpenApiDocument => {
  const registry = z.registry<{ id: string }>();
  const named = new Map<z.ZodType, string>();
  const register = (schema: z.ZodType | undefined) => {
    if (!schema) return;
    const id = (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
    if (id && !named.has(schema)) {
      named.set(schema, id);
      if (!registry.has(schema)) registry.add(schema, { id });
    }
  };
  register(ErrorBody);
  for (const route of routes) {
    register(route.body);
    if (route.answer instanceof z.ZodType) register(route.answer);
  }
  const generated = z.toJSONSchema(registry, { target: 'draft-2020-12', unrepresentable: 'any', io: 'output', uri: (id) => `#/components/schemas/${id}` }).schemas as Record<string, unknown>;
  // Schemas the registered ones share (named by their own `id`, or numbered) are put beside them as components too.
  const { __shared: shared, ...named_ } = generated as { __shared?: { $defs?: Record<string, unknown> } } & Record<string, unknown>;
  const hoisted = JSON.stringify({ ...named_, ...(shared?.$defs ?? {}) }).replaceAll('#/components/schemas/__shared#/$defs/', '#/components/schemas/');
  const components = JSON.parse(hoisted) as Record<string, unknown>;
  const inline = (schema: z.ZodType, io: 'input' | 'output') => {
    const id = named.get(schema);
    if (id) return ref(id);
    const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io }) as Record<string, unknown>;
    return rest;
  };
  const parametersOf = (schema: z.ZodType | undefined, where: 'path' | 'query') => {
    if (!schema) return [];
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'input' }) as { properties?: Record<string, unknown>; required?: string[] };
    return Object.entries(json.properties ?? {}).map(([name, property]) => ({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: property }));
  };
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const errors = { description: 'an error, with a stable code', content: { 'application/json': { schema: ref('ErrorBody') } } };
    const answer = route.answer instanceof z.ZodType ? { description: 'success', content: { 'application/json': { schema: inline(route.answer, 'output') } } } : { description: route.answer.description, content: { [route.answer.stream]: { schema: { type: 'string' } } } };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method.toLowerCase()}${route.path.replace(/\{(\w+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) => (next ?? '').toUpperCase())}`,
      parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query'), ...(route.answer instanceof z.ZodType ? [] : route.answer.stream === 'text/event-stream' ? [{ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'the seq of the last event received: the stream resumes after it' }] : [])],
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: inline(route.body, 'input') } } } } : {}),
      responses: { [String(route.status ?? 200)]: answer, '400': errors, '401': errors, '403': errors, '404': errors, '409': errors, '500': errors },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'rein serve', version, description: 'The local HTTP API of a rein workspace: sessions, records from any seq (JSON and server-sent events), views and actions. Every route needs the per-launch token (Authorization: Bearer <token>, or the cookie the page gets from its token URL); Host must be a loopback name; a request that changes state must come from the page’s own origin or from no browser.' },
    components: { schemas: components, securitySchemes: { token: { type: 'http', scheme: 'bearer' } } },
    security: [{ token: [] }],
    paths,
  };
};
