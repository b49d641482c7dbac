import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loopbackRequestProblem } from '../util/loopback-request.js';
import { InspectError } from './inspect-errors.js';
// `ws` is loaded when a relay starts, not when the CLI starts.

/** A local inspector relay: `ws://127.0.0.1:<port>` for producers and browsers, and the bridge page over HTTP. */
export interface InspectorRelay {
  readonly port: number;
  readonly wsUrl: string;
  readonly pageUrl: string;
  /** Messages relayed so far (kept for browsers that connect later). */
  relayed(): number;
  close(): Promise<void>;
}

const bridgePage = (port: number, inspectorUrl: string): string => `<!doctype html>
<html><head><meta charset="utf-8"><title>rein · Stately inspector</title>
<style>html,body,iframe{margin:0;width:100%;height:100%;border:0}</style></head>
<body><iframe id="inspector" src="${inspectorUrl}"></iframe>
<script>
const frame = document.getElementById('inspector');
const queue = [];
let ready = false;
window.addEventListener('message', (event) => {
  if (event.data && event.data.type === '@statelyai.connected') {
    ready = true;
    for (const item of queue.splice(0)) frame.contentWindow.postMessage(item, '*');
  }
});
const socket = new WebSocket('ws://127.0.0.1:${port}');
socket.onmessage = (event) => {
  const data = JSON.parse(event.data);
  if (ready) frame.contentWindow.postMessage(data, '*');
  else queue.push(data);
};
</script></body></html>`;

/**
 * Start a relay bound to 127.0.0.1 only (never another interface), serving only its own page and clients that are not
 * browsers (`loopbackRequestProblem`: another `Origin`, or a `Host` that is not loopback, is 403): every message a
 * client sends is kept (up to `maxMessages`) and forwarded to every other client, and each new client first receives
 * what was kept, so a browser opened after a replay still sees the whole session. The page embeds the Stately inspector UI, which the
 * browser (not rein) loads from `inspectorUrl`.
 */
export const startInspectorRelay = async (options: { port?: number; inspectorUrl?: string; maxMessages?: number } = {}): Promise<InspectorRelay> => {
  const { WebSocketServer, WebSocket } = await import('ws');
  const { createServer } = await import('node:http');
  const kept: string[] = [];
  const maxMessages = options.maxMessages ?? 200_000;
  let port = options.port ?? 0;
  const http: Server = createServer((request, response) => {
    // The page and the socket serve the session (its commands, files, the model's text): only to this relay's own
    // page and to clients that are not browsers — never to another site's page or a rebound DNS name.
    const problem = loopbackRequestProblem(request.headers, port);
    if (problem) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`forbidden: ${problem}\n`);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(bridgePage(port, options.inspectorUrl ?? 'https://stately.ai/inspect'));
  });
  const sockets = new WebSocketServer({
    server: http,
    verifyClient: (info: { req: { headers: Record<string, string | string[] | undefined> } }, done: (result: boolean, code?: number, message?: string) => void) => {
      const problem = loopbackRequestProblem(info.req.headers, port);
      if (problem) done(false, 403, `forbidden: ${problem}`);
      else done(true);
    },
  });
  // The WebSocket server re-emits the HTTP server's errors: handled here, so a failed listen is one typed error.
  sockets.on('error', () => undefined);
  sockets.on('connection', (client) => {
    for (const message of kept) client.send(message);
    client.on('message', (data) => {
      const message = data.toString();
      kept.push(message);
      if (kept.length > maxMessages) kept.shift();
      for (const other of sockets.clients) if (other !== client && other.readyState === WebSocket.OPEN) other.send(message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => {
      sockets.close();
      reject(error.code === 'EADDRINUSE' ? new InspectError('INSPECTOR_PORT_IN_USE', `port ${port} on 127.0.0.1 is in use: pick another with --serve <port> (0 picks a free one)`, { cause: error }) : error);
    });
    http.listen(port, '127.0.0.1', () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  return {
    port,
    wsUrl: `ws://127.0.0.1:${port}`,
    pageUrl: `http://127.0.0.1:${port}`,
    relayed: () => kept.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close(() => http.close(() => resolve()));
        http.closeAllConnections();
      }),
  };
};
