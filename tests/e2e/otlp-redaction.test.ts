import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';

const clean = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '', OTEL_SDK_DISABLED: '', OTEL_TRACES_EXPORTER: '', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' };

describe('content capture redacts the secrets a file the agent read holds (trial 6 F23)', () => {
  it('live --otlp and trace --format otlp-json: a URL password, a Stripe key, an AWS secret key and a Slack webhook never reach the collector', async () => {
    const workspace = await makeTempDir('rein-otlp-redact-');
    const receiver = await startOtlpReceiver();
    const secrets = ['hunter2pw', 'rk_live_51H8abcdefghijklmnopqrstu', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'XXXXXXXXXXXXXXXX'];
    try {
      await writeFile(join(workspace.path, 'app.env'), `DATABASE_URL=postgres://app:${secrets[0]}@db.internal/x\nSTRIPE=${secrets[1]}\nAWS_SECRET_ACCESS_KEY=${secrets[2]}\nslack=https://hooks.slack.com/services/T000/B000/${secrets[3]}\nVISIBLE_MARK=zz-kept\n`);
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'app.env' } }] }, { text: 'Done.' }] }));
      const run = await runInProcess(['run', 'read app.env', '--script', 'script.json', '--otlp', receiver.url], { cwd: workspace.path, env: clean });
      expect(run.code, run.stderr).toBe(0);
      const sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const trace = await runInProcess(['trace', sessionId, '--format', 'otlp-json'], { cwd: workspace.path, env: clean });
      expect(trace.code, trace.stderr).toBe(0);
      const live = receiver.requests.map((request) => request.body.toString('utf8')).join('\n');
      for (const exported of [live, trace.stdout]) {
        // The content was captured (the file's harmless line is there) and every secret in it is gone.
        expect(exported).toContain('zz-kept');
        expect(exported).toContain('[redacted]');
        for (const secret of secrets) expect(exported).not.toContain(secret);
      }
    } finally {
      await receiver.close();
      await workspace.remove();
    }
  }, 120_000);
});
