import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';

/** `@modelcontextprotocol/server-everything`, the reference server, started over stdio by the tests. */
export const everythingPath = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

/** The stdio entry of server-everything; `marker` lands in its environment so a test can find its process. */
export const everythingServer = (marker?: string) => ({ command: process.execPath, args: [everythingPath, 'stdio'], ...(marker ? { env: { REIN_TEST_MARKER: marker } } : {}) });

/** Pids of running processes whose environment holds `REIN_TEST_MARKER=<marker>`. */
export const pidsWithMarker = async (marker: string): Promise<number[]> => {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(`REIN_TEST_MARKER=${marker}`)) pids.push(Number(entry));
  }
  return pids;
};

/**
 * A scripted provider whose `gates[n]` runs before it answers the n-th model call (1-based) — so a test can change the
 * world (kill a server, change its tools) at a known point of the session.
 */
export const gatedProvider = (script: unknown, gates: Record<number, () => Promise<void>>): ModelProvider => {
  const inner = createScriptedProvider(parseScript(script));
  let calls = 0;
  return {
    name: inner.name,
    ...(inner.model ? { model: inner.model } : {}),
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      calls++;
      await gates[calls]?.();
      yield* inner.stream(request);
    },
  };
};

/** A small server of the official server SDK: arithmetic, a failing tool, a slow one, a destructive one and many numbered ones. */
export const demoServer = (options: { numbered?: number; slowMs?: number } = {}): McpServer => {
  const server = new McpServer({ name: 'demo', version: '1.0.0' });
  server.registerTool('add', { title: 'Add', description: 'Add two numbers and return their sum', inputSchema: z.object({ a: z.number(), b: z.number() }), annotations: { readOnlyHint: true } }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }));
  server.registerTool('fail', { description: 'Always reports a failure', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'the backend said no' }], isError: true }));
  server.registerTool('slow', { description: 'Answers after a while', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, async () => {
    await new Promise((resolve) => setTimeout(resolve, options.slowMs ?? 2_000));
    return { content: [{ type: 'text', text: 'finally' }] };
  });
  server.registerTool('delete_note', { description: 'Delete a note by id', inputSchema: z.object({ id: z.string() }), annotations: { destructiveHint: true } }, async ({ id }) => ({ content: [{ type: 'text', text: `deleted ${id}` }] }));
  for (let index = 0; index < (options.numbered ?? 0); index++) {
    const topic = ['weather forecast', 'invoice totals', 'calendar events', 'github pull request checks', 'database schema', 'slack channel history'][index % 6]!;
    server.registerTool(`lookup_${index}`, { description: `Look up ${topic} (record set ${index})`, inputSchema: z.object({ key: z.string() }), annotations: { readOnlyHint: true } }, async ({ key }) => ({ content: [{ type: 'text', text: `${topic} ${index}: ${key}` }] }));
  }
  return server;
};

/** An HTTP MCP endpoint on 127.0.0.1 (a free port) serving `factory` through the server SDK's handler. */
export interface HttpMcpServer {
  url: string;
  /** Headers of every request the endpoint received. */
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

const toHeaders = (incoming: IncomingHttpHeaders): Headers => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
};

/**
 * Serve an MCP server factory over Streamable HTTP with node:http on loopback. `mode: 'error500'` answers every
 * request with HTTP 500 (a broken server).
 */
export const startHttpMcpServer = async (factory: () => McpServer, options: { mode?: 'ok' | 'error500' } = {}): Promise<HttpMcpServer> => {
  const handler = createMcpHandler(() => factory());
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      seen.push(request.headers);
      if (options.mode === 'error500') {
        response.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.concat(chunks);
      const address = server.address() as AddressInfo;
      const answer = await handler.fetch(new Request(`http://127.0.0.1:${address.port}${request.url ?? '/'}`, { method: request.method ?? 'GET', headers: toHeaders(request.headers), ...(body ? { body } : {}) }));
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      if (answer.body) for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) response.write(chunk);
      response.end();
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers: seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.close();
    },
  };
};
