import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isThisMachineAddress, namesThisMachine } from './host-addresses.js';

/** One connection a sandboxed command asked the allow-list proxy for, and what the proxy decided. */
export interface ConnectionDecision {
  host: string;
  port: number;
  /** `CONNECT` (a tunnel, e.g. HTTPS) or the HTTP method of a plain proxied request. */
  method: string;
  decision: 'allow' | 'refuse';
  reason: string;
}

/** A running allow-list proxy: its Unix socket, the decisions so far, and how to stop it. */
export interface AllowListProxy {
  socketPath: string;
  decisions: ConnectionDecision[];
  close(): Promise<void>;
}

const normalizeHost = (host: string): string => host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();

/**
 * Whether `host` is on the allow-list: an exact, case-insensitive name (or IP literal), or a `*.example.com`
 * entry, which covers the subdomains of example.com (not example.com itself).
 */
/** The allow-list entries `host` matches (see `hostAllowed`). */
const matchingEntries = (host: string, allowedHosts: readonly string[]): string[] => {
  const name = normalizeHost(host);
  if (name === '') return [];
  return allowedHosts.filter((entry) => {
    const allowed = normalizeHost(entry);
    if (allowed.startsWith('*.')) return isIP(name) === 0 && name.endsWith(allowed.slice(1)) && name.length > allowed.length - 1;
    return allowed === name;
  });
};

/**
 * Whether `host` is on the allow-list: an exact, case-insensitive name (or IP literal), or a `*.example.com`
 * entry, which covers the subdomains of example.com (not example.com itself).
 */
export const hostAllowed = (host: string, allowedHosts: readonly string[]): boolean => matchingEntries(host, allowedHosts).length > 0;

/** How the proxy finds a name's addresses (the system resolver by default, IPv4 addresses first; tests give their own). */
export type HostLookup = (host: string) => Promise<string[]>;

const systemLookup: HostLookup = async (host) => (await (await import('node:dns/promises')).lookup(host, { all: true, verbatim: false })).map((entry) => entry.address);

const splitAuthority = (authority: string, defaultPort: number): { host: string; port: number } | undefined => {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!match) return undefined;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  return { host: normalizeHost(match[1]!), port };
};

const refusal = (decision: ConnectionDecision): string => `rein: ${decision.host}:${decision.port} refused by the network allow-list (${decision.reason})\n`;

/**
 * Start an HTTP(S) proxy on a Unix socket in a fresh private directory. It tunnels `CONNECT host:port` and forwards
 * plain `http://` requests only for allowed host names, answers every other request `403`, and records each
 * decision. It runs in rein's own process, outside the sandbox; commands reach it through a bridge inside.
 */
export const startAllowListProxy = async (options: { allowedHosts: readonly string[]; lookup?: HostLookup }): Promise<AllowListProxy> => {
  // node:http is loaded when a proxy starts, not by `import('rein')` (issue 31).
  const { createServer, request: httpRequest } = await import('node:http');
  const directory = await mkdtemp(join(tmpdir(), 'rein-proxy-'));
  const socketPath = join(directory, 'proxy.sock');
  const decisions: ConnectionDecision[] = [];
  const sockets = new Set<Socket>();
  const lookup = options.lookup ?? systemLookup;
  /**
   * Decide one connection and, when it is allowed, the address to connect to. The name is resolved here, once, and
   * the connection goes to that address (a second lookup could answer differently: DNS rebinding). An address of this
   * machine (loopback, link-local such as the cloud metadata service, an interface's own address) is reached only
   * through an entry that names this machine itself (`localhost`, `127.0.0.1`, `[::1]`), never through another name
   * that happens to resolve there.
   */
  const decide = async (host: string, port: number, method: string): Promise<{ decision: ConnectionDecision; address?: string }> => {
    const record = (decision: 'allow' | 'refuse', reason: string): ConnectionDecision => {
      const made: ConnectionDecision = { host, port, method, decision, reason };
      decisions.push(made);
      return made;
    };
    const entries = matchingEntries(host, options.allowedHosts);
    if (entries.length === 0) return { decision: record('refuse', 'not on the allow-list') };
    const name = normalizeHost(host);
    let addresses: string[];
    try {
      addresses = isIP(name) !== 0 ? [name] : await lookup(name);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) return { decision: record('allow', 'on the allow-list (the name does not resolve)') };
    const local = addresses.find((address) => isThisMachineAddress(address));
    if (local !== undefined && !entries.some(namesThisMachine)) return { decision: record('refuse', `resolves to ${local}, an address of this machine, which only an entry naming it (--allow-host ${local.includes(':') ? `[${local}]` : local}) opens`) };
    return { decision: record('allow', 'on the allow-list'), address: addresses[0]! };
  };
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(request.url ?? '');
    } catch {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('rein: the proxy expects absolute http:// URLs\n');
      return;
    }
    if (url.protocol !== 'http:') {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('rein: only http:// is proxied directly; use CONNECT for https\n');
      return;
    }
    const { decision, address } = await decide(url.hostname, url.port === '' ? 80 : Number(url.port), request.method ?? 'GET');
    if (decision.decision === 'refuse') {
      response.writeHead(403, { 'content-type': 'text/plain' }).end(refusal(decision));
      return;
    }
    if (address === undefined) {
      response.writeHead(502, { 'content-type': 'text/plain' }).end(`rein: ${decision.host} does not resolve\n`);
      return;
    }
    const upstream = httpRequest({ host: address, port: decision.port, method: request.method, path: `${url.pathname}${url.search}`, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', (error) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`rein: ${decision.host}:${decision.port} could not be reached (${error.message})\n`);
    });
    request.pipe(upstream);
  });
  server.on('connect', async (request: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = splitAuthority(request.url ?? '', 443);
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\r\nrein: CONNECT needs host:port\n');
      return;
    }
    const { decision, address } = await decide(target.host, target.port, 'CONNECT');
    if (decision.decision === 'refuse') {
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${refusal(decision)}`);
      return;
    }
    if (address === undefined) {
      client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\nrein: ${target.host} does not resolve\n`);
      return;
    }
    if (client.destroyed) return;
    const upstream = connect(target.port, address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', (error) => {
      if (client.writable) client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\nrein: ${target.host}:${target.port} could not be reached (${error.message})\n`);
      else client.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // A command rein runs as root gets a uid of its own (see sandbox-identity.ts), which must be able to connect; the
  // folder around the socket (0700) keeps everyone else on the host out.
  await chmod(socketPath, 0o666);
  server.unref();
  return {
    socketPath,
    decisions,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
};
