import { writeFile } from 'node:fs/promises';
import { terminalText } from '../../util/terminal-text.js';
import { resolve } from 'node:path';
import { toArray } from '../../projections/persistent-list.js';
import { rebuildView } from '../../projections/projection.js';
import { traceProjection } from '../../projections/trace.view.js';
import { blobText, readSession } from '../../session/session-records.js';
import { exportEvalCase } from '../../trace/eval-case.js';
import { analyzeTrace } from '../../trace/trace-analyzer.js';
import { renderTraceMarkdown, renderTraceText } from '../../trace/trace-report.js';
import { openStore, printJson, workspaceOf } from '../cli-context.js';
import type { TraceOptions } from './trace.flags.js';
import { ReinError } from '../../host/host-errors.js';
import { costLine, sessionCost } from '../../projections/cost.js';
import { configuredPrices } from '../config-prices.js';
import { exportTrace, wantsOtlp } from '../trace-export.js';
import { shareRedactor } from '../../trace/share-redaction.js';
import { secretsFromEnvironment } from '../telemetry-options.js';

/** The body of `rein trace` (see `registerTrace`). */
export const traceCommand = async (id: string, options: TraceOptions): Promise<void> => {
  if (options.format !== undefined && options.format !== 'text' && options.format !== 'otlp-json') throw new ReinError('USAGE', `--format must be text or otlp-json, got ${JSON.stringify(options.format)}`);
  const store = await openStore(options, await workspaceOf(options), 'read-only');
  try {
    const records = await readSession(store, id);
    if (wantsOtlp(options)) return await exportTrace(id, records, options, process.env, await configuredPrices(await workspaceOf(options)));
    const view = rebuildView(traceProjection, records);
    const report = await analyzeTrace(view, blobText(store, id));
    const users = toArray(view.users);
    // What this prints or writes is made to be shared: secrets the session met are removed unless --raw asks.
    const share = options.raw ? undefined : shareRedactor([records.map((record) => record.data), report], { secrets: secretsFromEnvironment(process.env) });
    const text = (value: string): string => share?.text(value) ?? value;
    const value = <T>(shared: T): T => share?.value(shared) ?? shared;
    if (options.out) await writeFile(resolve(options.out), text(renderTraceMarkdown(report, users)));
    if (options.eval !== undefined && options.eval !== false) {
      const evalCase = value(exportEvalCase(report));
      if (typeof options.eval === 'string') await writeFile(resolve(options.eval), `${JSON.stringify(evalCase, null, 2)}\n`);
      else return void process.stdout.write(`${JSON.stringify(evalCase, null, 2)}\n`);
    }
    // The cost is derived from the log now, at the configured prices (never stored): per agent, with the cache hit rate.
    const cost = sessionCost(records, await configuredPrices(await workspaceOf(options)));
    if (options.json) printJson(value({ ...report, turns: report.turns.length, cost: { usd: cost.usd ?? null, unpriced: cost.unpriced, byActor: Object.fromEntries([...cost.byActor].map(([actor, entry]) => [actor, { usd: entry.usd ?? null, calls: entry.calls }])), inputTokens: cost.inputTokens, outputTokens: cost.outputTokens, cacheReadTokens: cost.cacheReadTokens, cacheWriteTokens: cost.cacheWriteTokens } }));
    // The report quotes the model and its tools: shown with their control characters escaped (line breaks kept).
    else process.stdout.write(terminalText(`${text(renderTraceText(report, users))}${cost.calls.length > 0 ? `${costLine(cost)}\n` : ''}`, { newlines: true }));
  } finally {
    await store.close();
  }
};
