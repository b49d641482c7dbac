import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ReinError } from '../../host/host-errors.js';
import { createRein, type Rein } from '../../rein.js';
import type { EventStore } from '../../../stores/event-store.js';
import { isPostgresUrl } from '../../../stores/postgres/postgres-url.js';
import { openLevelEventStore } from '../../../stores/level-event-store.js';
import { openStore, printJson, protectedPathsOf, storeLocationOf, workspaceOf } from '../cli-context.js';
import { printText } from '../print-text.js';
import { loadWorkspaceConfig } from '../../providers/provider-settings.js';
import { buildProvider, providerSettingsFor } from '../provider-options.js';
import { permissionsOf, sandboxOf } from '../permission-options.js';
import { cliCapabilitiesFor } from '../capability-options.js';
import { pluginsFor, projectPluginFolders } from '../plugin-options.js';
import { hostRunFiles } from '../host-run-files.js';
import { listenReinServer } from '../../serve/rein-server.js';
import { environmentSecrets, exportSessionHtml } from '../../serve/export-html.js';
import type { ServeOptions } from './serve.flags.js';
import type { Prices } from '../../../models/price-table.js';
import { configuredPrices } from '../config-prices.js';

const portOf = (value: string | undefined): number => {
  if (value === undefined) return 0;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ReinError('USAGE', `--port must be a whole number from 0 to 65535, got ${JSON.stringify(value)}`);
  return port;
};

/** Open `url` in the desktop's browser; a failure is said, never fatal. */
const openInBrowser = (url: string): void => {
  const [command, ...args] = process.platform === 'darwin' ? ['open', url] : process.platform === 'win32' ? ['cmd', '/c', 'start', '', url] : ['xdg-open', url];
  const child = spawn(command!, args, { detached: true, stdio: 'ignore' });
  child.on('error', (error) => printText(`rein: could not open a browser (${error.message}): open ${url}\n`, process.stderr));
  child.unref();
};

/** A harness for the page's actions, as `rein run` composes one; undefined (read-only) when no provider can be built. */
const harnessFor = async (options: ServeOptions, workspace: string, store: EventStore, prices: Prices): Promise<Rein | undefined> => {
  let settings;
  try {
    settings = await providerSettingsFor(options, workspace);
  } catch (error) {
    // Viewing is what most people open the page for: say what the page cannot do, calmly, and how to enable it.
    printText(`rein: viewing only: the page can read every session; starting or resuming one needs a provider (${(error as Error).message})\n`, process.stderr);
    return undefined;
  }
  const loaded = await pluginsFor(options, workspace, { trustProject: Boolean(options.yes), interactive: false, launch: true });
  for (const warning of loaded.warnings) printText(`rein: ${warning}\n`, process.stderr);
  const { mcpServers, capabilities } = await cliCapabilitiesFor(workspace, options, { interactive: false });
  const { provider, fallbacks } = await buildProvider(settings, store);
  return createRein({
    store,
    workspace,
    protectedPaths: [...(await protectedPathsOf(options, workspace)), ...projectPluginFolders(loaded.plugins, workspace), ...(await hostRunFiles(workspace, loaded.hooks, mcpServers))],
    provider,
    ...(fallbacks ? { fallbacks } : {}),
    modelOptions: settings.modelOptions,
    permissions: permissionsOf(options),
    sandbox: sandboxOf(options, (await loadWorkspaceConfig(workspace))?.sandbox),
    plugins: loaded.plugins,
    ...(loaded.hooks ? { hooks: loaded.hooks } : {}),
    mcpServers,
    capabilities,
    prices,
  });
};

/**
 * The body of `rein serve` and `rein ui` (see `registerServe`): reads go through a read-only store object that
 * follows the stream files (so a session another process runs is followed live and never locked by this one);
 * actions go through a harness over a writing store. The token is `REIN_SERVE_TOKEN` when set (so a page survives a
 * restart on the same `--port`), else new for this launch. Runs until SIGINT or SIGTERM.
 */
export const serveCommand = async (sessionId: string | undefined, options: ServeOptions, command: 'serve' | 'ui'): Promise<void> => {
  const port = portOf(options.port);
  const workspace = await workspaceOf(options);
  const location = await storeLocationOf(options, workspace);
  const postgres = isPostgresUrl(location);
  const writer = options.readOnly ? undefined : await openStore(options, workspace, 'write');
  const reader = postgres ? (writer ?? (await openStore(options, workspace, 'read-only'))) : await openLevelEventStore(resolve(location), { readOnly: true, freshReads: true, readCopies: 64 });
  let rein: Rein | undefined;
  try {
    const prices = await configuredPrices(workspace);
    rein = writer ? await harnessFor(options, workspace, writer, prices) : undefined;
    const token = process.env.REIN_SERVE_TOKEN || undefined;
    const listening = await listenReinServer({ ...(rein ? { rein } : {}), store: reader, prices, port, readOnly: rein === undefined, ...(token ? { token } : {}), onSessionError: (id, error) => printText(`rein: session ${id} stopped: ${(error as Error).message}\n`, process.stderr) });
    const url = `${listening.origin}/?token=${listening.server.token}`;
    const page = listening.pageUrl(sessionId);
    if (options.json) printJson({ url, page, port: listening.port, readOnly: rein === undefined });
    else if (command === 'ui') printText(`rein ui: ${page}\n(the API and the page serve ${workspace} on 127.0.0.1 only; Ctrl-C stops)\n`);
    else printText(`rein serve: ${url}\nOpenAPI: ${listening.origin}/openapi.json (send Authorization: Bearer <token>) · Ctrl-C stops\n`);
    if (command === 'ui' && options.open) openInBrowser(page);
    await new Promise<void>((resolveStop) => {
      const stop = () => resolveStop();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await listening.close();
  } finally {
    await rein?.close('rein serve is stopping');
    if (reader !== writer) await reader.close();
    await writer?.close();
  }
};

/** The body of `rein export` (see `registerExport`). */
export const exportCommand = async (id: string, options: { workspace?: string; store?: string; json?: boolean; html?: boolean; out?: string }): Promise<void> => {
  if (!options.html) throw new ReinError('USAGE', 'choose the format: rein export <id> --html');
  const workspace = await workspaceOf(options);
  const prices = await configuredPrices(workspace);
  const store = await openStore(options, workspace, 'read-only');
  try {
    const html = await exportSessionHtml(store, id, { secrets: environmentSecrets(), prices });
    const file = resolve(options.out ?? `${id}.html`);
    await writeFile(file, html);
    if (options.json) printJson({ sessionId: id, file, bytes: Buffer.byteLength(html) });
    else printText(`wrote ${file} (${Math.round(Buffer.byteLength(html) / 1024)} KiB): the viewer of ${id}, self-contained, secrets redacted\n`);
  } finally {
    await store.close();
  }
};
