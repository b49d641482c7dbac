/*
 * The session runtime, loaded by the first `createRein` (or fork-for-retry, provider factory, plugin discovery) call
 * through src/index.ts: the harness, its host, effects, tools, sandbox and process running, hooks, plugins and MCP.
 */
export { createRein } from '../rein.js';
export { providerFailureOf, forkForRetry } from '../session/provider-retry.js';
export { createProviderFromSettings } from '../providers/provider-factory.js';
export { resolveMemoryScope } from '../memory/memory-scope.js';
export { discoverPlugins, pluginSpecsOf } from '../plugins/plugin-loader.js';
