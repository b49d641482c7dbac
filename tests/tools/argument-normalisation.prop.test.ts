import fc from 'fast-check';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../machines/typestate/canonical-json.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ModelEvent } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { createOpenAICompatibleProvider } from '../../src/providers/openai-compatible.provider.js';
import { createRein } from '../../src/rein.js';
import { builtinTools } from '../../src/tools/builtin-tools.js';
import { openLevelEventStore, type LevelEventStore } from '../../stores/index.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { doneChunks, echoTool, rawToolCallChunks } from '../support/raw-tool-call.js';

/** A JSON document as a tree, so the text can say what `JSON.stringify` never writes: `__proto__` keys, `-0`, `1e309`. */
type Json = { text: string } | { list: Json[] } | { members: Array<[string, Json]> };

const textOf = (node: Json): string => {
  if ('text' in node) return node.text;
  if ('list' in node) return `[${node.list.map(textOf).join(',')}]`;
  return `{${node.members.map(([key, value]) => `${JSON.stringify(key)}:${textOf(value)}`).join(',')}}`;
};

const specialKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', '', '0', 'path', '\u0000', 'é', '\ud83d\ude00'];
const key = fc.oneof(fc.constantFrom(...specialKeys), fc.string({ maxLength: 6 }), fc.constantFrom('\ud800', 'a\udfff'));
const leaf: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom('-0', '0', '1e309', '-1e309', '12345678901234567890', '5e-324', 'true', 'false', 'null', '-0.0').map((text) => ({ text })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => ({ text: JSON.stringify(value) })),
  fc.string({ unit: 'binary', maxLength: 12 }).map((value) => ({ text: JSON.stringify(value) })),
  fc.integer({ min: 50_000, max: 300_000 }).map((length) => ({ text: JSON.stringify('x'.repeat(length)) })),
);
const { tree } = fc.letrec<{ tree: Json }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('tree'), { maxLength: 4 }).map((list) => ({ list })),
    fc.array(fc.tuple(key, tie('tree')), { maxLength: 4 }).map((members) => ({ members })),
  ),
}));
const deep = fc.integer({ min: 60, max: 200 }).map((depth): Json => {
  let node: Json = { text: '1' };
  for (let level = 0; level < depth; level++) node = level % 2 === 0 ? { list: [node] } : { members: [['__proto__', node]] };
  return node;
});
/** The whole arguments object as the wire carries it (an object at the top, as every adapter requires). */
const wireArguments = fc.array(fc.tuple(key, fc.oneof({ weight: 4, arbitrary: tree }, { weight: 1, arbitrary: deep })), { maxLength: 5 }).map((members) => textOf({ members }));

/** What a custom provider (no wire) can hand over: JS values JSON has no word for. */
const jsValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-0, undefined, 10n, Number.NaN),
  fc.constant(new Map([['a', 1]])),
  fc.constant(new Set([1])),
  fc.constant(new Date(0)),
  fc.constant([1, , 3]),
  fc.constant(Object.create(null) as unknown).map(() => Object.assign(Object.create(null) as object, { inner: 1 })),
);
const customArguments = fc.dictionary(fc.oneof(key, fc.string({ maxLength: 4 })), jsValue, { maxKeys: 4 });

/** The values of a record as the store gives them back, for comparing a live read with one after reopening. */
const plain = (records: readonly RecordEnvelope[]) => records.map((record) => ({ seq: record.seq, type: record.type, data: record.data }));

let workspace: { path: string; remove: () => Promise<void> };
let storeDir: { path: string; remove: () => Promise<void> };
let store: LevelEventStore;
let server: LoopbackServer;
/** The arguments text the loopback model sends next (one property run at a time). */
let nextArguments = '{}';

beforeAll(async () => {
  workspace = await makeTempDir('rein-arguments-prop-');
  await writeFile(join(workspace.path, 'notes.txt'), 'remember the milk\n');
  storeDir = await makeTempDir('rein-arguments-prop-store-');
  store = await openLevelEventStore(storeDir.path);
  // Each session makes two requests: the first gets the tool call, the second the closing text.
  server = await startLoopbackServer((request) => ({ chunks: request.body.messages.some((message: { role: string }) => message.role === 'tool') ? doneChunks() : rawToolCallChunks('echo', nextArguments) }));
});
afterAll(async () => {
  await server.close();
  await store.close();
  await storeDir.remove();
  await workspace.remove();
});

/** Run one session, then check: it completed without an infrastructure failure, replay verifies it, resume accepts it. */
const roundTrip = async (provider: ModelProvider): Promise<RecordEnvelope[]> => {
  const rein = await createRein({ store, workspace: workspace.path, provider, tools: [...builtinTools(), echoTool], permissions: { mode: 'accept-edits' } });
  const session = await rein.startSession({ task: 'Go.' });
  const result = await session.whenQuiet();
  const records = await store.read(session.id);
  expect(result.status).toBe('completed');
  expect(records.filter((record) => record.type === 'effect.failed')).toEqual([]);
  expect((await rein.replaySession(session.id)).head).toBe(records.at(-1)!.seq);
  expect((await rein.resumeSession(session.id)).report.alreadyEnded).toBe(true);
  await rein.close();
  const responded = records.find((record) => record.type === 'model.responded')!.data as { toolCalls: Array<{ arguments: unknown; invalid?: unknown[] }> };
  const call = responded.toolCalls[0]!;
  // What was recorded is plain JSON: writing it as JSON and reading it back gives the same value.
  expect(canonicalJson(JSON.parse(JSON.stringify(call.arguments)))).toBe(canonicalJson(call.arguments));
  // A call with a problem never ran; one without ran with exactly the recorded keys.
  const settled = records.find((record) => record.type === 'tool.settled')!.data as { status: string; observation: string };
  if (call.invalid) expect(settled.status).toBe('error');
  else expect(settled.observation).toBe(`keys: ${Object.keys(call.arguments as object).join(',')}`);
  return records;
};

describe('any arguments a model sends keep its log replayable (issue 25 §7)', () => {
  it('JSON-ish arguments through the OpenAI-compatible adapter on loopback: live == replay, resume works, the store gives back what was live', async () => {
    await fc.assert(
      fc.asyncProperty(wireArguments, async (text) => {
        nextArguments = text;
        const provider = createOpenAICompatibleProvider({ model: 'loopback-1', baseUrl: `${server.url}/v1`, apiKey: 'sk-test-0123456789abcdefghij' });
        const live = await roundTrip(provider);
        expect(canonicalJson(plain(await store.read(live[0]!.stream)))).toBe(canonicalJson(plain(live)));
      }),
      { numRuns: propertyRuns(15) },
    );
  });

  it("a custom provider's JS values (holes, -0, undefined, Map, Set, BigInt, dates, null-prototype objects): the same", async () => {
    await fc.assert(
      fc.asyncProperty(customArguments, async (args) => {
        let calls = 0;
        const provider: ModelProvider = {
          name: 'custom',
          async *stream(): AsyncIterable<ModelEvent> {
            calls++;
            yield { type: 'started', model: 'custom-1' };
            if (calls === 1) yield { type: 'tool-intent', name: 'echo', arguments: args, providerCallId: 'c1' };
            else yield { type: 'text-delta', text: 'Done.' };
            yield { type: 'finished', stopReason: calls === 1 ? 'tool_use' : 'end_turn' };
          },
        };
        await roundTrip(provider);
      }),
      { numRuns: propertyRuns(25) },
    );
  });
});
