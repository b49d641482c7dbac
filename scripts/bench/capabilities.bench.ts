import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { CapabilityCatalog, CapabilityDescriptor } from '../../models/capability.records.js';
import type { McpToolInfo } from '../../models/mcp.records.js';
import { createMemoryEventStore } from '../../stores/index.js';
import { CapabilityDeriver, type ConnectionView } from '../../src/capabilities/capability-deriver.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';
import type { ModelProvider } from '../../src/providers/provider.js';
import { restoreProtected, snapshotProtected } from '../../src/tools/protected-snapshot.js';
import { absentProtectedPaths, removeCreatedProtectedPaths } from '../../src/tools/protected-watch.js';
import { Workspace } from '../../src/tools/workspace.js';
import { formatMs, median } from './bench-support.js';

const everything = fileURLToPath(new URL('../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

/**
 * `calls` echo calls through a rein session on server-everything over stdio (each from its `tool.started` to its
 * `tool.settled`, the pipeline and the settling step included) and, interleaved with them, the same call made with
 * the bare SDK client on its own server-everything: before each model call the provider makes one bare call. The
 * first five of each are warm-up. Returns both medians in ms.
 */
const mcpCalls = async (calls: number): Promise<{ rein: number; bare: number }> => {
  const { Client } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' }));
  const workspace = await mkdtemp(join(tmpdir(), 'rein-bench-mcp-'));
  const store = createMemoryEventStore();
  const bare: number[] = [];
  try {
    const turns = [...Array.from({ length: calls }, (_, index) => ({ text: '', toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: `m${index}` } }] })), { text: 'done' }];
    const scripted = createScriptedProvider(parseScript({ turns }));
    const provider: ModelProvider = {
      name: scripted.name,
      async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
        const started = performance.now();
        await client.callTool({ name: 'echo', arguments: { message: 'bare' } });
        bare.push(performance.now() - started);
        yield* scripted.stream(request);
      },
    };
    const rein = await createRein({ store, workspace, provider, skills: false, memory: false, mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } });
    const session = await rein.startSession({ task: 'echo' });
    const result = await session.whenQuiet();
    if (result.status !== 'completed') throw new Error(`the bench session ended ${result.status}: ${result.reason ?? ''}`);
    const records = await store.read(session.id);
    const started = new Map(records.filter((record) => record.type === 'tool.started').map((record) => [record.corr, record.at]));
    const through = records.filter((record) => record.type === 'tool.settled').map((record) => record.at - started.get(record.corr)!);
    return { rein: median(through.slice(5)), bare: median(bare.slice(5)) };
  } finally {
    await client.close();
    await rm(workspace, { recursive: true, force: true });
  }
};

const descriptor = (name: string, source: CapabilityDescriptor['source']): CapabilityDescriptor => ({ name, source, readOnly: true, destructive: false, openWorld: false, risk: 'read', tokens: 120, schemaDigest: `b3:${name}` });

/** A deriver over a catalog of 12 local tools and 988 MCP tools of four ready servers. */
const bigCatalog = () => {
  const deriver = new CapabilityDeriver();
  const catalog: CapabilityCatalog = {
    capabilities: [...Array.from({ length: 11 }, (_, index) => descriptor(`local_${index}`, 'builtin')), descriptor('tool_search', 'builtin')],
    skills: [],
    problems: [],
    policy: { mode: 'default', visibleLimit: 64, contextWindow: 200_000, toolShare: 0.25, hidden: [] },
  };
  deriver.observe({ type: 'capability.catalog', actor: 'root', data: catalog });
  const connections: ConnectionView[] = Array.from({ length: 4 }, (_, server) => ({
    value: 'ready',
    context: { path: `root/mcp/s${server}`, server: `s${server}`, transport: 'stdio', resources: false, attempts: 0, lastError: null, starts: 1, tools: Array.from({ length: 247 }, (_, index): McpToolInfo => ({ ...descriptor(`mcp__s${server}__tool_${index}`, 'mcp'), server: `s${server}`, tool: `tool_${index}` })) },
  }));
  return { deriver, catalog, connections };
};

/**
 * Per-round cost of deciding the visible set over 1,000 capabilities: a round where an input changed (a new
 * `tool_search` hit forces a full decision) and a round where nothing did, against a naive projection that filters
 * the whole catalog by mode each round.
 */
const visibleSetRounds = (rounds: number) => {
  const { deriver, catalog, connections } = bigCatalog();
  const all = [...catalog.capabilities, ...connections.flatMap((connection) => connection.context.tools)];
  const changed: number[] = [];
  const unchanged: number[] = [];
  const naive: number[] = [];
  let sink = 0;
  deriver.decide('root', 'root:e0', 1, () => connections);
  for (let round = 1; round <= rounds; round++) {
    let started = performance.now();
    sink += all.filter((entry) => entry.readOnly || entry.risk !== 'write').map((entry) => entry.name).length;
    naive.push(performance.now() - started);
    deriver.observe({ type: 'tool.settled', actor: 'root', data: { name: 'tool_search', status: 'ok', value: { hits: [`mcp__s${round % 4}__tool_${(round * 37) % 247}`] } } });
    started = performance.now();
    deriver.decide('root', `root:e${round}`, round + 1, () => connections);
    changed.push(performance.now() - started);
    started = performance.now();
    deriver.decide('root', `root:e${round}b`, round + 1, () => connections);
    unchanged.push(performance.now() - started);
  }
  if (sink < 0) throw new Error('unreachable');
  return { changed: median(changed), unchanged: median(unchanged), naive: median(naive) };
};

/**
 * The protected-path sweep around an MCP call of a tool that is not read-only (issue 25 §5): the check before and
 * after the call and the copy it compares against, in a git repository with its sample hooks, `rein.config.json` and
 * `.mcp.json` (17 protected entries). Median ms over `rounds`, after 20 warm-up rounds.
 */
const sweepRounds = async (rounds: number): Promise<number> => {
  const workspace = await mkdtemp(join(tmpdir(), 'rein-bench-sweep-'));
  try {
    execFileSync('git', ['init', '-q', workspace]);
    await writeFile(join(workspace, 'rein.config.json'), '{"provider":{"kind":"scripted"}}');
    await writeFile(join(workspace, '.mcp.json'), '{"mcpServers":{}}');
    const opened = await Workspace.open(workspace);
    const times: number[] = [];
    for (let round = 0; round < rounds + 20; round++) {
      const started = performance.now();
      const absent = await absentProtectedPaths(opened);
      const before = snapshotProtected(opened);
      await removeCreatedProtectedPaths(opened, absent);
      await restoreProtected(opened, before);
      if (round >= 20) times.push(performance.now() - started);
    }
    return median(times);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
};

/** `node dist/scripts/bench/capabilities.bench.js`: MCP call overhead through rein, and the visible set's cost per round. */
export const main = async (): Promise<void> => {
  process.stdout.write('capabilities\n');
  const { rein: reinMs, bare: bareMs } = await mcpCalls(60);
  process.stdout.write(`  ${'MCP echo over stdio, tool.started → tool.settled'.padEnd(52)} rein ${formatMs(reinMs).padStart(10)} · bare SDK callTool ${formatMs(bareMs)} · ratio ${(reinMs / bareMs).toFixed(2)}× (target ≤ 1.3×)\n`);
  const sweepMs = await sweepRounds(200);
  process.stdout.write(`  ${'protected-path sweep around a writing MCP call'.padEnd(52)} ${formatMs(sweepMs).padStart(10)} per call (read-only calls: none) · ratio to a bare callTool ${(sweepMs / bareMs).toFixed(2)}×\n`);
  const rounds = visibleSetRounds(2_000);
  process.stdout.write(`  ${'visible set over 1,000 capabilities, inputs changed'.padEnd(52)} ${formatMs(rounds.changed).padStart(10)} per round (target ≤ 1 ms) · naive filter ${formatMs(rounds.naive)} · ratio ${(rounds.changed / rounds.naive).toFixed(2)}×\n`);
  process.stdout.write(`  ${'visible set over 1,000 capabilities, nothing changed'.padEnd(52)} ${formatMs(rounds.unchanged).padStart(10)} per round · ratio ${(rounds.unchanged / rounds.naive).toFixed(2)}×\n`);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
