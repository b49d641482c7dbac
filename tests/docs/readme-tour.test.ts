import { spawn } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import { openAIConversation, modelExchange, type Reply } from '../support/loopback-model.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { serveOnce } from '../support/serve-once.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cliPath = join(root, 'dist', 'cli', 'rein.js');
const demoPath = join(root, 'dist', 'scripts', 'demo', 'run-demo.js');

/** The shell blocks of the README's tour (its "A five-minute tour" section), in order, as command lines. */
const tourLines = (readme: string): string[] => {
  const tour = readme.slice(readme.indexOf('## A five-minute tour'), readme.indexOf('\n## ', readme.indexOf('## A five-minute tour') + 5));
  return [...tour.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((match) =>
    match[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== ''),
  );
};

/** Words of a command line, quotes removed (the tour's lines use no escapes or expansions). */
const words = (line: string): string[] => [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]!);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

const exec = (args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/**
 * The model the tour's provider run talks to: an OpenAI-compatible endpoint on loopback, in the vendor's streaming
 * wire format. It looks at the project once, then answers.
 */
const lookingModel = (body: unknown): Reply => {
  const { calls } = openAIConversation(body as Parameters<typeof openAIConversation>[0]);
  return calls.length === 0
    ? { text: 'Looking at the project first.', toolCalls: [{ id: 'call_1', name: 'list_dir', arguments: { path: '.' } }] }
    : { text: 'The project has a src and a test folder; I did not change anything.' };
};

describe("the README's tour runs as written", () => {
  let home: { path: string; remove: () => Promise<void> };
  let server: LoopbackServer;
  let lines: string[];

  beforeAll(async () => {
    home = await makeTempDir('rein-tour-');
    server = await startLoopbackServer(modelExchange(lookingModel));
    lines = tourLines(await readFile(join(root, 'README.md'), 'utf8'));
  });
  afterAll(async () => {
    await server?.close();
    await home?.remove();
  });

  it(
    'every command of every shell block, in order, with the id and seq it prints filled in',
    async () => {
      expect(lines.length).toBeGreaterThan(8);
      const project = join(home.path, 'your-project');
      await cp(join(root, 'scripts', 'demo', 'sample-project'), project, { recursive: true });
      // HOME is empty (no shell profile or user files of this machine take part); the provider's base URL is the
      // loopback model, given the way a user would (REIN_BASE_URL), so the README's line stays as written.
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home.path, REIN_BASE_URL: `${server.url}/v1`, NO_COLOR: '1' };
      let cwd = home.path;
      let id = '';
      let seq = '';
      const ran: string[] = [];
      for (const line of lines) {
        const [command, ...rest] = words(line);
        if (command === 'cd') {
          expect(rest[0]).toBe('~/code/your-project');
          cwd = project;
          continue;
        }
        if (command === 'export') {
          const [name, value] = rest[0]!.split('=');
          env[name!] = value!.includes('…') ? 'sk-tour-test' : value;
          continue;
        }
        if (command === 'npm') {
          expect(rest.slice(0, 2)).toEqual(['start', '--']);
          const demo = await exec([demoPath, ...rest.slice(2)], cwd, env);
          expect(demo.code, `${line}\n${demo.stderr}`).toBe(0);
          id = /session (s-[\w-]+):/.exec(demo.stdout)![1]!;
          // A step boundary to fork and rewind at: the end of the step before the agent's edit.
          const store = await openLevelEventStore(join(cwd, rest[2]!, '.rein'), { readOnly: true });
          const records = await store.read(id);
          await store.close();
          const edit = records.find((record) => record.type === 'tool.settled' && (record.data as { name?: string }).name === 'edit')!;
          seq = String(Math.max(...records.filter((record) => record.seq < edit.seq && record.type === 'model.responded').map((record) => record.seq)) - 1);
          ran.push(line);
          continue;
        }
        expect([command, rest[0]]).toEqual(['npx', 'rein']);
        const args = rest.slice(1).map((word) => word.replace('<id>', id).replace('<seq>', seq));
        expect(args.join(' ')).not.toMatch(/<\w+>/);
        if (args[0] === 'ui' || args[0] === 'serve') {
          const served = await serveOnce([cliPath, ...args], cwd, env);
          expect(served.page, `${line}\n${served.stderr}`).toMatch(/^200 <!doctype html>/i);
        } else {
          const result = await exec([cliPath, ...args], cwd, env);
          expect(result.code, `${line}\n${result.stdout}\n${result.stderr}`).toBe(0);
          if (args[0] === 'sessions') expect(result.stdout).toContain(id);
          if (args[0] === 'show') expect(result.stdout).toContain('bash node --test');
          if (args[0] === 'replay') expect(result.stdout).toMatch(/verified \d+ records/);
          if (args[0] === 'diff') expect(result.stdout).toContain('src/stats.js');
          // Back before the agent's edit: the bug is there again.
          if (args[0] === 'rewind') expect(await readFile(join(cwd, 'demo', 'src', 'stats.js'), 'utf8')).toContain('total - value');
          if (args[0] === 'run') expect(result.stdout).toContain('✓ list_dir .');
        }
        ran.push(line);
      }
      // The provider run went to the loopback endpoint with the key the tour exported.
      expect(server.requests.length).toBeGreaterThanOrEqual(2);
      expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-tour-test');
      expect(ran.length).toBe(lines.filter((line) => !/^(cd|export) /.test(line)).length);
    },
    scaledTimeout(240_000),
  );
});
