import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { makeTempDir } from '../support/temp-dir.js';

const clean = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '', OTEL_SDK_DISABLED: '', OTEL_TRACES_EXPORTER: '' };

type RawSpan = { name: string; status?: { code?: number }; attributes: Array<{ key: string; value: Record<string, unknown> }> };
const attribute = (span: RawSpan, key: string): unknown => {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};
const spansOf = (document: any): RawSpan[] => (document?.resourceSpans ?? []).flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans));

describe('a command that did not exit 0 is a failed execute_tool span (trial 6 F10)', () => {
  it('live --otlp and trace --format otlp-json: exit 3 is status ERROR, error.type NonZeroExit, process.exit.code 3; exit 0 stays unset', async () => {
    const workspace = await makeTempDir('rein-otlp-exit-');
    const receiver = await startOtlpReceiver();
    try {
      const script = { turns: [{ text: 'Running.', toolCalls: [{ name: 'bash', arguments: { command: 'echo ZZCMD; exit 3' } }, { name: 'bash', arguments: { command: 'true' } }] }, { text: 'Done.' }] };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await runInProcess(['run', 'try', '--script', 'script.json', '--yes', '--otlp', receiver.url], { cwd: workspace.path, env: clean });
      expect(run.code, run.stderr).toBe(0);
      const sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const trace = await runInProcess(['trace', sessionId, '--format', 'otlp-json'], { cwd: workspace.path, env: clean });
      expect(trace.code, trace.stderr).toBe(0);
      for (const spans of [receiver.requests.flatMap((request) => spansOf(request.json)), spansOf(JSON.parse(trace.stdout))]) {
        const bash = spans.filter((span) => span.name === 'execute_tool bash');
        expect(bash).toHaveLength(2);
        const failed = bash.find((span) => attribute(span, 'process.exit.code') === 3)!;
        const passed = bash.find((span) => attribute(span, 'process.exit.code') === 0)!;
        expect(failed.status?.code).toBe(2);
        expect(attribute(failed, 'error.type')).toBe('NonZeroExit');
        expect(passed.status?.code ?? 0).toBe(0);
        expect(attribute(passed, 'error.type')).toBeUndefined();
      }
      expect(trace.stdout).not.toContain('ZZCMD');
    } finally {
      await receiver.close();
      await workspace.remove();
    }
  }, 120_000);
});
