// One benchmark case in this process: `node --expose-gc cases.mjs <system> <roundTrips> <runs>` prints one JSON line
// { system, roundTrips, runs: [µs per round trip, …], peakRssBytes, bytesPerRoundTrip }. The workload is the same for
// every system: a fake model asks for one no-op tool call per turn for `roundTrips` turns, then answers; one warm-up
// run, then `runs` timed runs, each on a fresh store. run.mjs starts one process per case.
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as z from 'zod';

const [system, roundTripsText, runsText] = process.argv.slice(2);
const roundTrips = Number(roundTripsText);
const runs = Number(runsText);

/** Bytes under a directory (files only), as `du --apparent-size` counts them. */
const directoryBytes = async (path) => {
  let total = 0;
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    total += entry.isDirectory() ? await directoryBytes(full) : (await stat(full)).size;
  }
  return total;
};

/**
 * CPU time used so far, in µs: the whole process (every thread: the main one, and V8's compiler and GC threads) and,
 * on Linux, the main thread alone (from its schedstat). On a busy machine wall time also counts the time the process
 * waited for a core; CPU time does not.
 */
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  let main;
  try {
    main = Number(readFileSync(schedstat, 'utf8').split(' ')[0]) / 1000;
  } catch {
    main = undefined;
  }
  return { process: user + system, main };
};
/** The CPU used since `from` (a `cpuNow()`). */
const cpuSince = (from) => {
  const now = cpuNow();
  return { process: now.process - from.process, main: from.main === undefined || now.main === undefined ? undefined : now.main - from.main };
};

const scratch = () => mkdtemp(join(tmpdir(), `rein-peers-${system}-`));

/** The floor: one msgpackr-encoded batch per round trip appended to classic-level with `sync: true`, nothing else. */
const floor = async () => {
  const { ClassicLevel } = await import('classic-level');
  const { pack } = await import('msgpackr');
  const directory = await scratch();
  const db = new ClassicLevel(join(directory, 'db'), { valueEncoding: 'view' });
  await db.open();
  const cpu = cpuNow();
  const started = performance.now();
  for (let turn = 1; turn <= roundTrips; turn++) {
    const value = pack({ seq: turn, type: 'round-trip', at: Date.now(), model: { turn, text: 'go', toolCalls: [{ callId: `c${turn}`, name: 'noop', arguments: {} }] }, tool: { callId: `c${turn}`, status: 'ok', observation: 'ok' } });
    await db.batch([{ type: 'put', key: `r!${String(turn).padStart(12, '0')}`, value }], { sync: true });
  }
  const elapsed = performance.now() - started;
  const used = cpuSince(cpu);
  await db.close();
  const bytes = await directoryBytes(join(directory, 'db'));
  await rm(directory, { recursive: true, force: true });
  return { elapsed, cpu: used, bytes };
};

/** rein through its public API, as a host app would run it: `store` is 'sync', 'relaxed' or 'memory'. */
const rein = (mode) => async () => {
  const { createRein, defineTool, openLevelEventStore, createMemoryEventStore } = await import('../../../dist/src/index.js');
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    parameters: z.object({}).strict(),
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false, requiresConfirmation: false },
    risk: 'read',
    sideEffect: 'none',
    resumePolicy: 'rerun-after-check',
    execute: async () => ({ ok: true, output: 'ok' }),
  });
  const reply = async function* (turn) {
    yield { type: 'started', model: 'bench' };
    yield { type: 'text-delta', text: turn <= roundTrips ? 'go' : 'done' };
    if (turn <= roundTrips) yield { type: 'tool-intent', providerCallId: `c${turn}`, name: 'noop', arguments: {} };
    yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } };
    yield { type: 'finished', stopReason: turn <= roundTrips ? 'tool_use' : 'end_turn' };
  };
  const provider = { name: 'bench', model: 'bench', stream: (request) => reply(request.turn) };
  const directory = await scratch();
  const storeDirectory = join(directory, '.rein');
  const store = mode === 'memory' ? createMemoryEventStore() : await openLevelEventStore(storeDirectory, { durability: mode });
  const harness = await createRein({ store, workspace: directory, provider, tools: [noop], budgets: { maxTurns: roundTrips + 5, maxToolCalls: roundTrips + 5, maxTokens: 1e12, maxWallTimeMs: 3_600_000 } });
  const cpu = cpuNow();
  const started = performance.now();
  const session = await harness.startSession({ task: 'bench' });
  const result = await session.whenQuiet();
  const elapsed = performance.now() - started;
  const used = cpuSince(cpu);
  if (result.status !== 'completed') throw new Error(`rein ended ${result.status}: ${result.reason ?? ''}`);
  await harness.close();
  await store.close();
  const bytes = mode === 'memory' ? undefined : await directoryBytes(join(storeDirectory, 'streams', session.id));
  await rm(directory, { recursive: true, force: true });
  return { elapsed, cpu: used, bytes };
};

/**
 * The Vercel AI SDK 6: `generateText` with its mock language model and a no-op tool, one step per round trip. The
 * mock remembers every call it got (each with the whole prompt); the case empties that list on every call so the
 * measurement is the SDK's own cost, not the mock's.
 */
const aiSdk = async () => {
  const { generateText, tool, stepCountIs } = await import('ai');
  const { MockLanguageModelV3 } = await import('ai/test');
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  let turn = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      model.doGenerateCalls.length = 0;
      turn++;
      if (turn <= roundTrips) return { content: [{ type: 'tool-call', toolCallId: `c${turn}`, toolName: 'noop', input: '{}' }], finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage, warnings: [] };
      return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
  const noop = tool({ description: 'Does nothing.', inputSchema: z.object({}), execute: async () => 'ok' });
  const cpu = cpuNow();
  const started = performance.now();
  const result = await generateText({ model, tools: { noop }, stopWhen: stepCountIs(roundTrips + 1), prompt: 'bench' });
  const elapsed = performance.now() - started;
  const used = cpuSince(cpu);
  if (result.steps.length !== roundTrips + 1) throw new Error(`AI SDK made ${result.steps.length} steps`);
  return { elapsed, cpu: used, bytes: undefined };
};

/** LangGraph.js: a StateGraph over MessagesAnnotation, an agent node (the fake model) and a ToolNode; optionally checkpointed to SQLite with synchronous=FULL. */
const langGraph = (checkpointed) => async () => {
  const { StateGraph, MessagesAnnotation, START, END } = await import('@langchain/langgraph');
  const { ToolNode } = await import('@langchain/langgraph/prebuilt');
  const { tool } = await import('@langchain/core/tools');
  const { AIMessage, HumanMessage } = await import('@langchain/core/messages');
  const noop = tool(async () => 'ok', { name: 'noop', description: 'Does nothing.', schema: z.object({}) });
  let turn = 0;
  const agent = async () => {
    turn++;
    return { messages: [turn <= roundTrips ? new AIMessage({ content: 'go', tool_calls: [{ id: `c${turn}`, name: 'noop', args: {} }] }) : new AIMessage('done')] };
  };
  let saver;
  let directory;
  if (checkpointed) {
    const { SqliteSaver } = await import('@langchain/langgraph-checkpoint-sqlite');
    directory = await scratch();
    saver = SqliteSaver.fromConnString(join(directory, 'checkpoints.sqlite'));
    saver.db.pragma('synchronous = FULL');
  }
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', new ToolNode([noop]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => (state.messages.at(-1)?.tool_calls?.length ? 'tools' : END))
    .addEdge('tools', 'agent')
    .compile(saver ? { checkpointer: saver } : {});
  const cpu = cpuNow();
  const started = performance.now();
  const result = await graph.invoke({ messages: [new HumanMessage('bench')] }, { recursionLimit: 2 * roundTrips + 10, configurable: { thread_id: 'bench' } });
  const elapsed = performance.now() - started;
  const used = cpuSince(cpu);
  if (result.messages.length !== 2 * roundTrips + 2) throw new Error(`LangGraph ended with ${result.messages.length} messages`);
  let bytes;
  if (saver) {
    saver.db.close();
    bytes = await directoryBytes(directory);
    await rm(directory, { recursive: true, force: true });
  }
  return { elapsed, cpu: used, bytes };
};

const systems = {
  floor,
  'rein-sync': rein('sync'),
  'rein-relaxed': rein('relaxed'),
  'rein-memory': rein('memory'),
  'ai-sdk': aiSdk,
  langgraph: langGraph(false),
  'langgraph-sqlite': langGraph(true),
};

const runOnce = systems[system];
if (!runOnce) throw new Error(`unknown system ${system}; one of ${Object.keys(systems).join(', ')}`);
await runOnce();
const perRoundTrip = [];
const cpuPerRoundTrip = [];
const mainPerRoundTrip = [];
let bytes;
for (let run = 0; run < runs; run++) {
  globalThis.gc?.();
  const measured = await runOnce();
  perRoundTrip.push((measured.elapsed * 1000) / roundTrips);
  cpuPerRoundTrip.push(measured.cpu.process / roundTrips);
  if (measured.cpu.main !== undefined) mainPerRoundTrip.push(measured.cpu.main / roundTrips);
  bytes = measured.bytes;
}
process.stdout.write(`${JSON.stringify({ system, roundTrips, runs: perRoundTrip, cpuRuns: cpuPerRoundTrip, ...(mainPerRoundTrip.length === runs ? { mainRuns: mainPerRoundTrip } : {}), peakRssBytes: process.resourceUsage().maxRSS * 1024, bytesPerRoundTrip: bytes === undefined ? undefined : bytes / roundTrips })}\n`);
