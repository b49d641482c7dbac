import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ServeError } from './serve-errors.js';

const loopbackNames = new Set(['127.0.0.1', 'localhost', '[::1]']);

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The cookie that carries the token: named after the port, as cookies are not told apart by port. */
export const tokenCookie = (port: number): string => `rein-token-${port}`;

const cookieOf = (request: IncomingMessage, name: string): string | undefined => {
  for (const part of (header(request, 'cookie') ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
};

const sameToken = (given: string | undefined, token: string): boolean => {
  if (given === undefined) return false;
  const left = Buffer.from(given);
  const right = Buffer.from(token);
  return left.length === right.length && timingSafeEqual(left, right);
};

/** The origins the page is served from at `port`. */
const ownOrigins = (port: number, hosts: readonly string[]): Set<string> => new Set([...loopbackNames, ...hosts].map((name) => `http://${name}:${port}`));

/**
 * Refuse what must not be served (DESIGN §3: every frontend reads the same log; the server is the user's, on
 * loopback): a `Host` that is not a loopback name (or one of `hosts`) at this port — a rebound DNS name reaching
 * 127.0.0.1 — and an `Origin` (or `Sec-Fetch-Site: cross-site`) of any other site are `SERVE_FORBIDDEN`; a request
 * that changes state must also come as JSON (no HTML form can send it). Then the token: `Authorization: Bearer
 * <token>` or the page's cookie, else `SERVE_UNAUTHORIZED`.
 */
export const guardRequest = (request: IncomingMessage, options: { token: string; port: number; hosts: readonly string[]; changes: boolean; tokenOptional?: boolean }): void => {
  const host = header(request, 'host');
  let hostUrl: URL | undefined;
  try {
    hostUrl = host === undefined ? undefined : new URL(`http://${host}`);
  } catch {
    hostUrl = undefined;
  }
  const hostname = hostUrl?.hostname;
  if (!hostUrl || hostname === undefined || !(loopbackNames.has(hostname) || options.hosts.includes(hostname)) || Number(hostUrl.port || 80) !== options.port || hostUrl.username !== '' || hostUrl.pathname !== '/') {
    throw new ServeError('SERVE_FORBIDDEN', `Host ${JSON.stringify(host ?? '')} is not this server (127.0.0.1:${options.port}): a name that resolves here is not enough`);
  }
  const origin = header(request, 'origin');
  if (origin !== undefined && !ownOrigins(options.port, options.hosts).has(origin)) throw new ServeError('SERVE_FORBIDDEN', `Origin ${JSON.stringify(origin)} is not this server's page`);
  if (header(request, 'sec-fetch-site') === 'cross-site') throw new ServeError('SERVE_FORBIDDEN', 'a request from another site is refused');
  if (options.changes && !/^application\/json\b/i.test(header(request, 'content-type') ?? '')) throw new ServeError('SERVE_FORBIDDEN', 'a request that changes state must send JSON (Content-Type: application/json)');
  if (options.tokenOptional) return;
  const authorization = header(request, 'authorization');
  const bearer = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
  if (!sameToken(bearer, options.token) && !sameToken(cookieOf(request, tokenCookie(options.port)), options.token)) {
    throw new ServeError('SERVE_UNAUTHORIZED', 'this server needs its token: open the URL rein serve printed, or send Authorization: Bearer <token>');
  }
};

/** Whether the token in a page URL's query is this server's. */
export const isServerToken = (given: string | null, token: string): boolean => sameToken(given ?? undefined, token);
