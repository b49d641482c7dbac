/**
 * rein embedded in a plain Node HTTP server (127.0.0.1 only; add your own authentication before exposing it).
 *
 *   REIN_WORKSPACE=/path/to/repo REIN_PROVIDER=openai REIN_BASE_URL=http://127.0.0.1:11434/v1 REIN_MODEL=qwen2.5-coder \
 *     node dist/scripts/examples/http-server.js
 *
 *   curl -s -X POST localhost:8787/sessions -d '{"task":"fix the failing test"}'   → { "sessionId": "s-…" }
 *   curl -N localhost:8787/sessions/<id>/records                                  → records as server-sent events
 *   curl -s -X POST localhost:8787/sessions/<id>/messages -d '{"text":"also update the README"}'
 *   curl -s -X POST localhost:8787/sessions/<id>/cancel
 *
 * The provider is configured like the CLI's (REIN_PROVIDER, REIN_MODEL, REIN_BASE_URL, OPENAI_API_KEY /
 * ANTHROPIC_API_KEY, or <workspace>/rein.config.json). PORT chooses the port (default 8787; 0 picks a free one).
 * Ctrl-C interrupts running sessions (resumable) and closes the store.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { configFileName, createProviderFromSettings, createRein, loadWorkspaceConfig, openLevelEventStore, resolveProviderSettings } from '../../src/index.js';
import { createReinHttpHandler, reinRoutes } from './http-api.js';

const workspace = resolve(process.env.REIN_WORKSPACE ?? process.cwd());
const settings = resolveProviderSettings({ env: process.env, file: await loadWorkspaceConfig(workspace), workspace });
const store = await openLevelEventStore(resolve(workspace, '.rein'));
const { provider, fallbacks } = await createProviderFromSettings(settings, { store });
const rein = await createRein({
  store,
  workspace,
  provider,
  fallbacks,
  modelOptions: settings.modelOptions,
  protectedPaths: [resolve(workspace, '.rein'), resolve(workspace, configFileName)],
});

const server = createServer(createReinHttpHandler(reinRoutes(rein)));
server.listen(Number(process.env.PORT ?? 8787), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`rein http example listening on http://127.0.0.1:${port} (provider ${provider.name}${provider.model ? ` ${provider.model}` : ''}, workspace ${workspace})\n`);
});

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await rein.close('the server is shutting down');
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  await store.close();
  process.stdout.write('stopped\n');
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
