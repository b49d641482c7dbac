import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/** The trial's secrets: an AWS key id and secret, a DB password, a Stripe live key, an SSH private key's body line. */
const secrets = {
  awsId: 'AKIAIOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',
  dbPassword: 'Tr0ub4dor-and-3',
  stripe: 'sk_live_51Habcdefghijklmnopqrstuv',
  sshLine: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
};

let workspace: { path: string; remove: () => Promise<void> };
let sessionId: string;
const env = { REIN_CONFIG_HOME: '' };

beforeAll(async () => {
  workspace = await makeTempDir('rein-share-redact-');
  env.REIN_CONFIG_HOME = join(workspace.path, '..', `${workspace.path.split('/').pop()}-config`);
  await writeFile(join(workspace.path, '.env'), `AWS_ACCESS_KEY_ID=${secrets.awsId}\nAWS_SECRET_ACCESS_KEY=${secrets.awsSecret}\nDB_PASSWORD=${secrets.dbPassword}\nSTRIPE_KEY=${secrets.stripe}\nAPP_NAME=zz-visible\n`);
  await writeFile(join(workspace.path, 'id_ed25519'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${secrets.sshLine}\nQyNTUxOQAAACDpkQkz0OnmbXMc8Xj3bVoG9PcsqRkWlH5eFz0pxHbW0QAAAJgAAAAA\n-----END OPENSSH PRIVATE KEY-----\n`);
  // The model repeats what it read in its own words: the password and the secret key, and a line of the SSH key.
  const script = {
    turns: [
      { text: 'Reading the configuration.', toolCalls: [{ name: 'read', arguments: { path: '.env' } }, { name: 'read', arguments: { path: 'id_ed25519' } }] },
      { text: `Found them. The database password is ${secrets.dbPassword}, the AWS secret is ${secrets.awsSecret} and the key starts ${secrets.sshLine}.` },
    ],
  };
  await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  const run = await runInProcess(['run', 'find the credentials', '--script', 'script.json'], { cwd: workspace.path, env });
  expect(run.code, run.stderr).toBe(0);
  sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
}, 120_000);
afterAll(() => workspace.remove());

const expectClean = (what: string, text: string) => {
  for (const [name, secret] of Object.entries(secrets)) expect(text, `${what} holds ${name}`).not.toContain(secret);
  expect(text, what).toContain('[redacted]');
};

describe('secrets the agent read are redacted in what users share (issue 25 §6)', () => {
  it('rein trace: the report, --out, --eval and --json hold none of them, the model\'s own sentences included', async () => {
    const text = await runInProcess(['trace', sessionId], { cwd: workspace.path, env });
    expect(text.code, text.stderr).toBe(0);
    expectClean('the trace report', text.stdout);
    const out = join(workspace.path, 'report.md');
    const evalFile = join(workspace.path, 'case.json');
    const written = await runInProcess(['trace', sessionId, '--out', out, '--eval', evalFile], { cwd: workspace.path, env });
    expect(written.code, written.stderr).toBe(0);
    expectClean('--out', await readFile(out, 'utf8'));
    expectClean('--eval <file>', await readFile(evalFile, 'utf8'));
    const evalStdout = await runInProcess(['trace', sessionId, '--eval'], { cwd: workspace.path, env });
    expectClean('--eval', evalStdout.stdout);
    const json = await runInProcess(['trace', sessionId, '--json'], { cwd: workspace.path, env });
    expect(json.code, json.stderr).toBe(0);
    expectClean('--json', json.stdout);
    expect(JSON.parse(json.stdout)).toBeTypeOf('object');
  }, 120_000);

  it('rein show and show --json hold none of them; --raw shows them as recorded, and the raw log still replays', async () => {
    const show = await runInProcess(['show', sessionId], { cwd: workspace.path, env });
    expect(show.code, show.stderr).toBe(0);
    expectClean('rein show', show.stdout);
    const json = await runInProcess(['show', sessionId, '--json'], { cwd: workspace.path, env });
    expectClean('rein show --json', json.stdout);
    const raw = await runInProcess(['show', sessionId, '--raw'], { cwd: workspace.path, env });
    expect(raw.stdout).toContain(secrets.dbPassword);
    expect(raw.stdout).toContain(secrets.awsSecret);
    const replay = await runInProcess(['replay', sessionId], { cwd: workspace.path, env });
    expect(replay.code, replay.stderr).toBe(0);
  }, 120_000);
});
