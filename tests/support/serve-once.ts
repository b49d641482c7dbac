import { spawn } from 'node:child_process';

/** What a server command printed, how it exited, and the status and body of the page its URL opened. */
export interface ServedOnce {
  code: number | null;
  stdout: string;
  stderr: string;
  page: string;
}

/** A server command (`rein ui`, `rein serve`): started, its printed URL fetched, then stopped as Ctrl-C would. */
export const serveOnce = (args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<ServedOnce> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let page = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(stdout)?.[0];
      if (url && page === '') {
        page = 'fetching';
        // As a browser does: the token URL sets the cookie and sends the page's own URL, which loads with it.
        fetch(url, { redirect: 'manual' })
          .then(async (login) => {
            const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
            const response = await fetch(new URL(login.headers.get('location') ?? '/', url), { headers: { cookie } });
            page = `${response.status} ${await response.text()}`;
            child.kill('SIGINT');
          })
          .catch(reject);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, page }));
  });

