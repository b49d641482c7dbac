import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { createRein } from '../../src/rein.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { spansOfRecords, type SpanViewOptions } from '../../src/projections/spans.view.js';
import { modelInputsOf } from '../../src/telemetry/model-inputs.js';
import { readableSpanOf, resourceOf } from '../../src/telemetry/otel-bridge.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { delegationTree, treeProvider } from '../support/delegation-fixtures.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { bySpanId, checkSpanTree, checkTool } from './telemetry-support.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** Every value a span exports as text: its name, attributes, events, links and status message. */
const exportedText = (span: ReadableSpan): string => JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events, links: span.links, status: span.status });

/** The properties every export must have: one root, parents inside the trace, one span per call, live == log. */
const checkSpans = (records: readonly RecordEnvelope[], live: readonly ReadableSpan[], options: { captureContent?: boolean; secrets?: string[]; modelInputOf?: SpanViewOptions['modelInputOf'] } = {}) => {
  const logSpans = spansOfRecords(records, options);
  checkSpanTree(records, logSpans);
  const resource = resourceOf();
  const fromLog = logSpans.map((span) => readableSpanOf(span, resource));

  // Live sent exactly the spans that ended; the log export adds only those still open (a paused session).
  const open = fromLog.filter((span) => span.attributes['rein.open'] === true);
  expect(bySpanId(live)).toEqual(bySpanId(fromLog.filter((span) => span.attributes['rein.open'] !== true)));
  expect(live.length + open.length).toBe(fromLog.length);
  for (const secret of options.secrets ?? []) for (const span of [...fromLog, ...live]) expect(exportedText(span)).not.toContain(secret);
  return fromLog;
};

const secretArbitrary = fc.stringMatching(/^[A-Za-z0-9]{12,20}$/).map((tail) => `s3cr3t-${tail}`);

const toolCall = (secret: string) =>
  fc.oneof(
    fc.record({ name: fc.constant('read'), arguments: fc.record({ path: fc.constantFrom('a.txt', 'secret.txt', 'missing.txt') }) }),
    fc.record({ name: fc.constant('write'), arguments: fc.record({ path: fc.constantFrom('a.txt', 'new.txt', '../out.txt'), content: fc.constantFrom(`key=${secret}`, 'plain') }) }),
    fc.record({ name: fc.constant('list_dir'), arguments: fc.record({ path: fc.constantFrom('.', 'nowhere') }) }),
    fc.record({ name: fc.constant('check'), arguments: fc.record({ pass: fc.boolean() }) }),
    fc.record({ name: fc.constantFrom('read', 'no_such_tool'), arguments: fc.constant({ note: secret }) }),
  );

const scriptOf = (secret: string) =>
  fc
    .tuple(fc.array(fc.record({ text: fc.constantFrom('', 'working', `the key is ${secret}`), toolCalls: fc.array(toolCall(secret), { maxLength: 3 }) }), { maxLength: 6 }), fc.boolean())
    .map(([turns, finish]) => ({ turns: finish ? [...turns, { text: 'Done.', toolCalls: [] }] : turns }));

const runLive = async (provider: ModelProvider, workspace: string, options: { captureContent: boolean; secrets: string[]; rein?: Record<string, unknown>; answers?: boolean[] }) => {
  const store = createMemoryEventStore();
  const exporter = new InMemorySpanExporter();
  const rein = await createRein({ store, workspace, provider, memory: false, ...options.rein, telemetry: { exporter, captureContent: options.captureContent, secrets: options.secrets } });
  const session = await rein.startSession({ task: 'Follow the script.' });
  let result = await session.whenQuiet();
  let asked = 0;
  while (options.answers && result.status === 'paused') {
    const pending = session.pendingApprovals();
    if (pending.length === 0) break;
    for (const request of pending) {
      // An answer may end a child at once (no turn left of its share), deciding a join that stops the others waiting.
      if (!session.pendingApprovals().some((open) => open.approvalId === request.approvalId)) continue;
      await session.approve(request.approvalId, { decision: options.answers[asked++ % options.answers.length] ? 'allow-once' : 'deny' });
    }
    result = await session.whenQuiet();
  }
  const stats = await rein.telemetry!.flush();
  expect(stats.dropped).toBe(0);
  const records = await store.read(session.id);
  // The chat spans' prompts, as an export from the log reads them (live telemetry read the same blobs).
  const inputs = await modelInputsOf(store, session.id, records);
  return { records, live: exporter.getFinishedSpans(), modelInputOf: (ref: string) => inputs.get(ref) };
};

describe('spans of random sessions', () => {
  it('scripted sessions: one root, every parent in the trace, one span per model and tool call, live == log, no secret exported', async () => {
    await fc.assert(
      fc.asyncProperty(secretArbitrary.chain((secret) => fc.tuple(fc.constant(secret), scriptOf(secret), fc.boolean(), fc.constantFrom<'default' | 'accept-edits'>('default', 'accept-edits'))), async ([secret, script, captureContent, mode]) => {
        const workspace = await makeTempDir();
        try {
          await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
          await writeFile(join(workspace.path, 'secret.txt'), `token: ${secret}\n`);
          const { records, live, modelInputOf } = await runLive(createScriptedProvider(parseScript(script)), workspace.path, { captureContent, secrets: [secret], rein: { tools: [...builtinTools(), checkTool], permissions: { mode }, budgets: { maxTurns: 10, maxToolCalls: 20 } } });
          const spans = checkSpans(records, live, { captureContent, secrets: [secret], modelInputOf });
          if (!captureContent) for (const span of spans) expect(exportedText(span)).not.toMatch(/alpha|working|plain/);
        } finally {
          await workspace.remove();
        }
      }),
      { numRuns: propertyRuns(12) },
    );
  });

  it('delegation trees: children nest under the call that started them, stopped ones end with their parent', async () => {
    await fc.assert(
      fc.asyncProperty(delegationTree(2), fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), async (tree, answers) => {
        const workspace = await makeTempDir();
        try {
          await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
          const { records, live } = await runLive(treeProvider(tree), workspace.path, { captureContent: false, secrets: [], answers, rein: { delegation: { maxDepth: 2, maxFanOut: 5 }, sandbox: { loginShell: false }, budgets: { maxTurns: 6 } } });
          const spans = checkSpans(records, live);
          const agents = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'invoke_agent' && span.parentSpanContext);
          const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
          for (const agent of agents) expect(byId.get(agent.parentSpanContext!.spanId)!.name).toBe('execute_tool delegate_task');
          const started = flattenRecords(records).filter((record) => record.type === 'delegation.started').length;
          expect(agents).toHaveLength(started);
        } finally {
          await workspace.remove();
        }
      }),
      { numRuns: propertyRuns(8) },
    );
  });
});
