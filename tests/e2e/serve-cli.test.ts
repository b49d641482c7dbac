import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../src/providers/sse-parser.js';
import { startCli } from '../support/cli.js';
import { seedStatsProject } from '../support/agent-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';
import { sessionEndedIn } from '../../src/host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

/** A run whose command takes a moment, so the server follows it while another process writes it. */
const slowScript = {
  turns: [{ text: 'Waiting a moment.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1; echo done' } }] }, { text: 'Done waiting.' }],
};

describe('rein ui, as a user runs it', () => {
  let directory: { path: string; remove: () => Promise<void> };
  let server: ReturnType<typeof startCli>;
  let started: { url: string; page: string; port: number; readOnly: boolean };
  let exited: Promise<number | null>;

  beforeAll(async () => {
    directory = await makeTempDir('rein-serve-cli-');
    await seedStatsProject(directory.path);
    await writeFile(join(directory.path, 'slow.json'), JSON.stringify(slowScript));
    server = startCli(['ui', '--json', '--script', 'slow.json', '--yes'], { cwd: directory.path, env: { HOME: directory.path } });
    exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)));
    let output = '';
    started = await new Promise((resolve, reject) => {
      server.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('\n')) resolve(JSON.parse(output.split('\n')[0]!) as typeof started);
      });
      void exited.then((code) => reject(new Error(`rein ui exited (${String(code)}) before printing its URL`)));
    });
  });
  afterAll(async () => {
    if (server.exitCode === null) server.kill('SIGTERM');
    await exited;
    await directory.remove();
  });

  it('prints the page URL with its token and serves only with it', async () => {
    expect(started.readOnly).toBe(false);
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{20,}$/);
    const origin = new URL(started.url).origin;
    expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
    const landing = await fetch(started.url, { redirect: 'manual' });
    expect(landing.status).toBe(303);
    const cookie = landing.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${origin}/api/sessions`, { headers: { cookie } })).status).toBe(200);
  });

  it('follows a session another process runs, live, to its end', async () => {
    const origin = new URL(started.url).origin;
    const token = new URL(started.url).searchParams.get('token')!;
    const headers = { authorization: `Bearer ${token}` };
    // The other process: `rein run --json` prints each record as it becomes durable; its first names the session.
    const run = startCli(['run', '--script', 'slow.json', '--yes', '--json'], { cwd: directory.path, env: { HOME: directory.path } });
    const finished = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
    let printed = '';
    const id = await new Promise<string>((resolve, reject) => {
      run.stdout!.on('data', (chunk: Buffer) => {
        printed += chunk.toString('utf8');
        const created = printed.split('\n').find((line) => line.includes('"session.created"'));
        if (created) resolve((JSON.parse(created) as { stream: string }).stream);
      });
      void finished.then((code) => reject(new Error(`rein run exited (${String(code)}) before its first record`)));
    });
    const response = await fetch(`${origin}/api/sessions/${id}/events?from=1`, { headers });
    const seqs: number[] = [];
    let ended = false;
    for await (const event of readSse(response.body!)) {
      if (event.event !== 'record') continue;
      const record = JSON.parse(event.data) as RecordEnvelope;
      seqs.push(record.seq);
      if (sessionEndedIn(record)) {
        ended = true;
        break;
      }
    }
    expect(ended).toBe(true);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
    expect(await finished).toBe(0);
  });

  it('stops on SIGINT', async () => {
    server.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});
