/** The names a loopback server may be reached by (a browser puts one of them in `Host` and `Origin`). */
const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

const headerOf = (headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Why a request to a server listening on loopback `port` must be refused, or undefined when it may be served.
 * Binding to 127.0.0.1 does not stop a browser: any page can open `ws://127.0.0.1:<port>` (WebSockets ignore CORS)
 * or send a "simple" cross-site POST, and a rebound DNS name (`evil.example` → 127.0.0.1) reaches it with the
 * browser's full rights. So `Host`, when present, must name a loopback address at `port` (a rebound name is
 * refused), and `Origin`, when present, must be this server's own loopback origin (`http://127.0.0.1:<port>`,
 * `http://localhost:<port>` or `http://[::1]:<port>`) — `null` included, as a sandboxed frame sends it. Clients that
 * are not browsers (curl, a `ws` producer) send no `Origin` and are served.
 */
export const loopbackRequestProblem = (headers: Readonly<Record<string, string | string[] | undefined>>, port: number): string | undefined => {
  const host = headerOf(headers, 'host');
  if (host !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(`http://${host}`);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !loopbackHosts.has(parsed.hostname) || Number(parsed.port || 80) !== port || parsed.pathname !== '/' || parsed.username !== '' || parsed.password !== '') return `Host ${JSON.stringify(host)} is not this loopback server (127.0.0.1:${port})`;
  }
  const origin = headerOf(headers, 'origin');
  if (origin !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.protocol !== 'http:' || !loopbackHosts.has(parsed.hostname) || Number(parsed.port || 80) !== port || parsed.origin !== origin) return `Origin ${JSON.stringify(origin)} is not this server's own page (http://127.0.0.1:${port})`;
  }
  return undefined;
};
