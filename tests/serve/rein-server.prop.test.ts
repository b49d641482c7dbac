import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody, StartBody } from '../../src/serve/api-schemas.js';
import { propertyRuns } from '../support/temp-dir.js';
import { startViewerFixture, type ViewerFixture } from '../support/viewer-fixture.js';

/** Every code the API may answer a bad request with: its own, and the typed errors of the layers below it. */
const knownCodes = /^(SERVE_[A-Z_]+|SESSION_NOT_FOUND|APPROVAL_NOT_FOUND|STORE_[A-Z_]+|BLOB_NOT_FOUND|TURN_NOT_FOUND|ACTOR_NOT_FOUND|CONTEXT_NOT_RECORDED|INPUT_INVALID|USAGE|FORK_NOT_AT_BOUNDARY|SESSION_INVALID)$/;

let known = 's-none';
const segment = fc.oneof(
  fc.constant('').map(() => known),fc.string({ maxLength: 12 }), fc.constantFrom('s-none', '..', '%2e%2e', '%00', 'root%2Fapproval-1', ''));
const path = fc.oneof(
  fc.tuple(fc.constantFrom('/api/sessions/', '/api/sessions/x/', '/api/', '/'), segment).map(([prefix, rest]) => prefix + encodeURIComponent(rest)),
  fc.tuple(segment, fc.constantFrom('records', 'events', 'timeline', 'trace', 'context', 'states', 'memory', 'blob', 'export', 'messages', 'approvals/a', 'confirmations/e', 'interrupt', 'cancel', 'resume', 'fork', 'replay')).map(([id, rest]) => `/api/sessions/${encodeURIComponent(id || 'x')}/${rest}`),
  fc.constantFrom('/api/sessions', '/api/compare', '/api/machines', '/openapi.json'),
);
const query = fc.dictionary(fc.constantFrom('from', 'to', 'limit', 'offset', 'turn', 'actor', 'seq', 'ref', 'a', 'b', 'status', 'q', 'token'), fc.oneof(fc.string({ maxLength: 8 }), fc.integer().map(String), fc.integer({ min: 1, max: 200 }).map(String), fc.constantFrom('-1', '0', '1e400', 'NaN', 'artifact://x', 'root')));
const body = fc.oneof(fc.jsonValue().map((value) => JSON.stringify(value)), fc.string({ maxLength: 40 }));

/** Arbitrary requests never crash the server nor get a 500: each bad one is a typed 4xx with a stable code. */
describe('rein serve’s API under arbitrary requests', () => {
  let fixture: ViewerFixture;
  beforeAll(async () => {
    fixture = await startViewerFixture();
    known = await fixture.runToEnd();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('answers every request with a success or a typed error, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT'), path, query, body, fc.boolean(), async (method, route, parameters, text, withToken) => {
        // A body that would start a real session is not what this property is about.
        if (method === 'POST' && route === '/api/sessions' && StartBody.safeParse((() => { try { return JSON.parse(text) as unknown; } catch { return undefined; } })()).success) return;
        const controller = new AbortController();
        const response = await fetch(`${fixture.listening.origin}${route}?${new URLSearchParams(parameters).toString()}`, {
          method,
          signal: controller.signal,
          headers: { ...(withToken ? { authorization: `Bearer ${fixture.token}` } : {}), ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
          ...(method === 'GET' ? {} : { body: text }),
        });
        expect(response.status, `${method} ${route}`).toBeLessThan(500);
        if (response.headers.get('content-type')?.startsWith('text/event-stream')) controller.abort();
        else if (response.status >= 400) expect(ErrorBody.parse(await response.json()).error.code).toMatch(knownCodes);
        else await response.arrayBuffer();
      }),
      { numRuns: propertyRuns(60) },
    );
  });
});
