import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventStore } from '../../stores/event-store.js';
import type { Rein } from '../rein.js';
import { apiRoutes, type ApiContext } from './api-routes.js';
import { openApiDocument, type OpenApiDocument } from './openapi.js';
import { loadPageAssets, type PageAssets } from './page-assets.js';
import { guardRequest, isServerToken, tokenCookie } from './request-guard.js';
import { parseWith, pathPattern, readJsonBody, sendJson, type Route } from './route-kit.js';
import { errorAnswer, ServeError } from './serve-errors.js';
import { DigestCache } from './session-digest.js';
import { defaultPrices, type Prices } from '../../models/price-table.js';
import { SessionControl } from './session-control.js';

/** Options of `createReinServer`. */
export interface ReinServerOptions {
  /** The harness the actions go through (start, send, approve, resume, fork…); without one the server is read-only. */
  rein?: Rein;
  /**
   * Where reads and live tails come from (default `rein.store`). With LevelDB, pass a read-only store over the same
   * directory (`openLevelEventStore(root, { readOnly: true, freshReads: true })`, as `rein serve` does): a writing
   * store opens every stream it reads in place, and so locks it against a `rein resume` in another process.
   */
  store?: EventStore;
  /** The token every request must carry (default: 32 random bytes, new for each server). */
  token?: string;
  /** Take no action (every state-changing route answers `SERVE_READ_ONLY`). */
  readOnly?: boolean;
  /** Host names besides the loopback ones the server may be reached by (for a host app behind its own proxy). */
  hosts?: readonly string[];
  /** The built page's directory (default `dist/ui` of rein's package); `false` serves the API only. */
  assets?: string | false;
  /**
   * What the sessions' cost is charged at (US dollars per million tokens; default the harness's prices, else the
   * shipped `defaultPrices`). `rein serve` passes rein.config.json's `prices` over the defaults.
   */
  prices?: Prices;
  /** Told about a session that failed while running on in the background after an action. */
  onSessionError?: (sessionId: string, error: unknown) => void;
}

/** The HTTP API and the viewer page over one harness, to mount in any `node:http` server. */
export interface ReinServer {
  readonly token: string;
  /** The request listener: `createServer(server.handle)`, or call it from your own router for the paths it serves. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** The OpenAPI 3.1 document of the API (also served at `/openapi.json`). */
  openapi(): OpenApiDocument;
  /** Every route of the API (method, OpenAPI path, schemas). */
  readonly routes: readonly Route[];
  /** Ends the open event streams (the harness and the store stay the caller's). */
  close(): void;
}

const version = '0.1.0';
const pageHeaders = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The HTTP API of `rein serve` for a host app: sessions, records from any seq (JSON and server-sent events), views and
 * actions, `/openapi.json`, and the viewer page at `/` (its script and styles under `/assets/`). Every request needs
 * the token (`Authorization: Bearer <token>`, or the `HttpOnly; SameSite=Strict` cookie `/?token=<token>` sets before
 * it redirects to `/`), a loopback `Host` and, when it sends one, the server's own `Origin` (`guardRequest`). Errors
 * are `{ error: { code, message } }` with stable codes. Never throws from `handle`.
 */
export const createReinServer = (options: ReinServerOptions): ReinServer => {
  const store = options.store ?? options.rein?.store;
  if (!store) throw new ServeError('SERVE_BAD_REQUEST', 'createReinServer needs a harness (rein) or a store');
  const token = options.token ?? randomBytes(32).toString('base64url');
  const streams = new Set<() => void>();
  const readOnly = options.readOnly === true || options.rein === undefined;
  const context: ApiContext = {
    store,
    digests: new DigestCache(store, 32, options.prices ?? options.rein?.prices ?? defaultPrices),
    ...(options.rein ? { rein: options.rein } : {}),
    ...(readOnly || !options.rein ? {} : { control: new SessionControl(options.rein, options.onSessionError) }),
    streams,
    cache: {},
    ...(typeof options.assets === 'string' ? { assets: options.assets } : {}),
  };
  const routes = apiRoutes(context);
  const matchers = routes.map((route) => ({ route, pattern: pathPattern(route.path) }));
  let document: OpenApiDocument | undefined;
  const openapi = () => (document ??= openApiDocument(routes, version));
  let assets: Promise<PageAssets> | undefined;
  const page = () => {
    if (options.assets === false) throw new ServeError('SERVE_NOT_FOUND', 'this server serves the API only');
    assets ??= loadPageAssets(options.assets);
    return assets.catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
  };
  const hosts = options.hosts ?? [];

  const serve = async (request: IncomingMessage, response: ServerResponse, url: URL, port: number): Promise<void> => {
    const method = request.method ?? 'GET';
    // The token URL: the cookie is set and the page loads from a URL without the token (the fragment survives).
    if (method === 'GET' && url.pathname === '/' && url.searchParams.has('token')) {
      guardRequest(request, { token, port, hosts, changes: false, tokenOptional: true });
      if (!isServerToken(url.searchParams.get('token'), token)) throw new ServeError('SERVE_UNAUTHORIZED', 'this is not the token of this server: open the URL rein serve printed');
      response.writeHead(303, { location: '/', 'set-cookie': `${tokenCookie(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`, 'cache-control': 'no-store' });
      response.end();
      return;
    }
    const candidates = matchers.filter((matcher) => matcher.pattern.test(url.pathname));
    const match = candidates.find((candidate) => candidate.route.method === method);
    const changes = match ? match.route.changes : method !== 'GET' && method !== 'HEAD';
    guardRequest(request, { token, port, hosts, changes });
    if (method === 'GET' && (url.pathname === '/' || url.pathname === '/assets/app.js' || url.pathname === '/assets/app.css')) {
      const loaded = await page();
      const [type, body] = url.pathname === '/' ? ['text/html; charset=utf-8', loaded.html] : url.pathname.endsWith('.js') ? ['text/javascript; charset=utf-8', loaded.script] : ['text/css; charset=utf-8', loaded.styles];
      response.writeHead(200, { ...pageHeaders, 'content-type': type, 'content-length': Buffer.byteLength(body) });
      response.end(body);
      return;
    }
    if (method === 'GET' && url.pathname === '/openapi.json') return sendJson(response, 200, openapi());
    if (!match) {
      if (candidates.length > 0) throw new ServeError('SERVE_METHOD_NOT_ALLOWED', `${method} is not allowed on ${url.pathname}`);
      throw new ServeError('SERVE_NOT_FOUND', `no route ${method} ${url.pathname}`);
    }
    const { route, pattern } = match;
    if (route.changes && readOnly) throw new ServeError('SERVE_READ_ONLY', 'this server is read-only: it takes no actions');
    const params = parseWith(route.params, Object.fromEntries(Object.entries(pattern.exec(url.pathname)?.groups ?? {}).map(([key, value]) => [key, decodeURIComponent(value)])), 'path');
    const query = parseWith(route.query, Object.fromEntries(url.searchParams), 'query');
    const body = route.body ? parseWith(route.body, await readJsonBody(request), 'body') : undefined;
    const answer = await route.handle({ params, query, body, request, response });
    if (!(route.answer instanceof Object && 'stream' in route.answer)) sendJson(response, route.status ?? 200, answer);
  };

  return {
    token,
    routes,
    openapi,
    handle: async (request, response) => {
      const port = request.socket.localPort ?? 0;
      try {
        await serve(request, response, new URL(request.url ?? '/', 'http://127.0.0.1'), port);
      } catch (error) {
        const { status, code, message } = errorAnswer(error);
        if (response.headersSent) response.end();
        else sendJson(response, status, { error: { code, message } });
      }
    },
    close: () => {
      for (const stop of [...streams]) stop();
    },
  };
};

/** A `ReinServer` listening on 127.0.0.1. */
export interface ListeningReinServer {
  server: ReinServer;
  port: number;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** The page's URL with the token (and, given a session, the fragment that opens it). */
  pageUrl(sessionId?: string): string;
  close(): Promise<void>;
}

/** Listen on 127.0.0.1 (`port` 0: a free one) with `createReinServer(options)`; `close` ends streams and connections. */
export const listenReinServer = async (options: ReinServerOptions & { port?: number }): Promise<ListeningReinServer> => {
  const server = createReinServer(options);
  // node:http is loaded when a server listens, not by `import('rein')` (issue 31).
  const { createServer } = await import('node:http');
  const http = createServer((request, response) => void server.handle(request, response));
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    server,
    port,
    origin,
    pageUrl: (sessionId) => `${origin}/?token=${server.token}${sessionId ? `#/s/${encodeURIComponent(sessionId)}` : ''}`,
    close: async () => {
      server.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
};
