import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import fc from 'fast-check';
import { loopbackRequestProblem } from '../../src/util/loopback-request.js';
import { startInspectorRelay, type InspectorRelay } from '../../src/inspect/inspector-relay.js';
import { jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * The trial's E31: the relay bound to 127.0.0.1 served the session to a page of any site (WebSockets are not subject
 * to CORS) and to a rebound DNS name. It now serves its own page's origin and clients that send none; anything else is 403.
 */
const get = (port: number, headers: Record<string, string>): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path: '/', headers }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    sent.on('error', reject);
    sent.end();
  });

/** Open a socket with these headers: the messages it got once the relay replayed what it kept, or the refusal's status. */
/** Connect with `headers`; resolves with the upgrade's status and the messages received once `enough` holds (default: two). */
const open = (relay: Pick<InspectorRelay, 'wsUrl'>, headers: Record<string, string>, enough: (messages: string[]) => boolean = (messages) => messages.length === 2): Promise<{ status: number; messages: string[] }> =>
  new Promise((resolve) => {
    const socket = new WebSocket(relay.wsUrl, { headers });
    const messages: string[] = [];
    socket.on('message', (data) => {
      messages.push(data.toString());
      if (enough(messages)) {
        socket.close();
        resolve({ status: 101, messages });
      }
    });
    socket.on('unexpected-response', (_request, response) => {
      resolve({ status: response.statusCode ?? 0, messages });
      socket.terminate();
    });
    socket.on('error', () => undefined);
  });

describe('the inspector relay serves only its own page and non-browser clients', () => {
  let relay: InspectorRelay;
  beforeEach(async () => {
    relay = await startInspectorRelay({ port: 0 });
    // A producer (no Origin, as rein's own connection) sends the session.
    const producer = new WebSocket(relay.wsUrl);
    await new Promise((resolve) => producer.once('open', resolve));
    producer.send(JSON.stringify({ type: '@xstate.actor', secret: 'rm keep.txt' }));
    producer.send(JSON.stringify({ type: '@xstate.event', secret: 'Tests pass' }));
    await expect.poll(() => relay.relayed()).toBe(2);
    producer.close();
  });
  afterEach(() => relay.close());

  it('a socket from another web origin is refused with 403 and gets nothing', async () => {
    for (const origin of ['https://evil.example', `http://evil.example:${relay.port}`, 'null', `http://127.0.0.1:${relay.port + 1}`, `https://127.0.0.1:${relay.port}`]) {
      expect(await open(relay, { Origin: origin }), origin).toEqual({ status: 403, messages: [] });
    }
  });

  it('a rebound DNS name (Host not loopback) is refused for the socket and the page', async () => {
    expect(await open(relay, { Host: `evil.example:${relay.port}` })).toEqual({ status: 403, messages: [] });
    expect((await get(relay.port, { Host: `evil.example:${relay.port}` })).status).toBe(403);
    expect((await get(relay.port, { Host: `127.0.0.1:${relay.port}`, Origin: 'https://evil.example' })).status).toBe(403);
  });

  it('its own page origin and clients without one get the session', async () => {
    for (const origin of [`http://127.0.0.1:${relay.port}`, `http://localhost:${relay.port}`]) {
      const seen = await open(relay, { Origin: origin });
      expect(seen.status, origin).toBe(101);
      expect(seen.messages[0]).toContain('rm keep.txt');
    }
    expect((await open(relay, {})).status).toBe(101);
    const page = await get(relay.port, { Host: `localhost:${relay.port}` });
    expect(page.status).toBe(200);
    expect(page.body).toContain(`ws://127.0.0.1:${relay.port}`);
  });
});

describe('rein inspect --serve (the trial\'s repro, through the CLI)', () => {
  it('a page of another origin gets 403 from the relay; the relay\'s own page origin gets the session', async () => {
    const workspace = await makeTempDir('rein-inspect-serve-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'x', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] }, { text: 'Tests pass.' }] }));
      const run = await runInProcess(['run', 'x', '--script', 'script.json', '--approve', 'bash', '--json'], { cwd: workspace.path });
      const id = String(jsonLines(run.stdout)[0]!.stream);
      const child = startCli(['inspect', id, '--serve', '0', '--json'], { cwd: workspace.path });
      try {
        const page = await new Promise<string>((resolve, reject) => {
          let output = '';
          child.stdout!.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            const summary = jsonLines(output)[0];
            if (summary?.page) resolve(String(summary.page));
          });
          child.once('exit', (code) => reject(new Error(`rein inspect exited with ${code}: ${output}`)));
        });
        const port = Number(new URL(page).port);
        const wsUrl = `ws://127.0.0.1:${port}`;
        expect(await open({ wsUrl }, { Origin: 'https://evil.example' })).toEqual({ status: 403, messages: [] });
        expect((await get(port, { Host: `evil.example:${port}` })).status).toBe(403);
        // The session's events arrive in as many messages as the relay's batching makes: wait for the command's.
        const own = await open({ wsUrl }, { Origin: page }, (messages) => messages.some((message) => message.includes('echo hi')));
        expect(own.status).toBe(101);
        expect(own.messages.join('\n')).toContain('echo hi');
      } finally {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
    } finally {
      await workspace.remove();
    }
  }, 60_000);
});

describe('loopbackRequestProblem', () => {
  const allowed = (port: number) => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]);

  it('serves a request only when its Origin (if any) is the server\'s own and its Host (if any) is loopback at the port', () => {
    const port = 18600;
    const origin = fc.oneof(
      fc.constantFrom(...allowed(port), 'null', '', 'https://stately.ai', `http://127.0.0.1:${port}/`, `http://127.0.0.1.evil.example:${port}`, `http://localhost:${port + 1}`, `http://LOCALHOST:${port}`, `http://user@127.0.0.1:${port}`),
      fc.webUrl().map((url) => new URL(url).origin),
      fc.string(),
    );
    const host = fc.oneof(fc.constantFrom(`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.0.0.1`, `evil.example:${port}`, `127.0.0.1:${port}@evil.example`, `localhost.:${port}`), fc.domain().map((name) => `${name}:${port}`), fc.string());
    fc.assert(
      fc.property(fc.option(origin, { nil: undefined }), fc.option(host, { nil: undefined }), (originHeader, hostHeader) => {
        const headers = { ...(originHeader === undefined ? {} : { origin: originHeader }), ...(hostHeader === undefined ? {} : { host: hostHeader }) };
        const served = loopbackRequestProblem(headers, port) === undefined;
        const originOk = originHeader === undefined || allowed(port).has(originHeader);
        const hostOk = hostHeader === undefined || [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(hostHeader.toLowerCase());
        expect(served, JSON.stringify(headers)).toBe(originOk && hostOk);
      }),
      { numRuns: 500 },
    );
  });
});
