import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One request the loopback server received, with its JSON body parsed. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** What the server answers: status, headers and body pieces, each written separately (`delayMs` apart). */
export interface Exchange {
  status?: number;
  headers?: Record<string, string>;
  chunks: Array<string | Buffer>;
  delayMs?: number;
  /** Keep the connection open after the last chunk (a stalled or slow stream) until the client goes away. */
  hang?: boolean;
}

export type ExchangeHandler = (request: ReceivedRequest, index: number) => Exchange | Promise<Exchange>;

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: ReceivedRequest[];
  /** Responses the client abandoned before the server finished writing them. */
  abandoned: number;
  close(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const write = async (response: ServerResponse, exchange: Exchange, closed: () => boolean): Promise<void> => {
  response.writeHead(exchange.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...exchange.headers });
  response.flushHeaders();
  for (const chunk of exchange.chunks) {
    if (closed()) return;
    response.write(chunk);
    if (exchange.delayMs) await pause(exchange.delayMs);
    else await new Promise((resolve) => setImmediate(resolve));
  }
  if (exchange.hang) {
    while (!closed()) await pause(20);
    return;
  }
  response.end();
};

/** Start an HTTP server on 127.0.0.1 that answers request `n` with `handler(request, n)`; it records every request. */
export const startLoopbackServer = async (handler: ExchangeHandler): Promise<LoopbackServer> => {
  const requests: ReceivedRequest[] = [];
  const state = { abandoned: 0 };
  const server = createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (raw += chunk));
    request.on('end', async () => {
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // not JSON: keep the text
      }
      const received: ReceivedRequest = { method: request.method ?? 'GET', path: request.url ?? '/', headers: request.headers, body };
      const index = requests.push(received) - 1;
      let closed = false;
      response.on('close', () => {
        if (!response.writableFinished) state.abandoned++;
        closed = true;
      });
      response.socket?.setNoDelay(true);
      try {
        await write(response, await handler(received, index), () => closed);
      } catch (error) {
        response.destroy(error as Error);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get abandoned() {
      return state.abandoned;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** A stored transcript under tests/fixtures/providers (`openai/text.sse`). */
export const transcript = (name: string): string => readFileSync(fileURLToPath(new URL(`../fixtures/providers/${name}`, import.meta.url)), 'utf8');

/** Split a transcript into its events (each ends with a blank line), the way a server flushes them. */
export const eventChunks = (text: string): string[] => text.split(/(?<=\n\n)/).filter((chunk) => chunk.length > 0);

/** A streaming answer: the transcript's events as separate writes. */
export const streamOf = (text: string, options: Omit<Exchange, 'chunks'> = {}): Exchange => ({ ...options, chunks: eventChunks(text) });

/** A JSON error answer. */
export const jsonError = (status: number, body: unknown, headers: Record<string, string> = {}): Exchange => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  chunks: [JSON.stringify(body)],
});
