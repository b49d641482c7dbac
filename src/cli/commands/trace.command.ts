import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { toArray } from '../../projections/persistent-list.js';
import { rebuildView } from '../../projections/projection.js';
import { traceProjection } from '../../projections/trace.view.js';
import { blobText, readSession } from '../../session/session-records.js';
import { exportEvalCase } from '../../trace/eval-case.js';
import { analyzeTrace } from '../../trace/trace-analyzer.js';
import { renderTraceMarkdown, renderTraceText } from '../../trace/trace-report.js';
import { openStore, printJson, workspaceOf, type CommonOptions } from '../cli-context.js';
import { addCommonOptions } from './run.command.js';

interface TraceOptions extends CommonOptions {
  out?: string;
  eval?: string | boolean;
}

/**
 * `rein trace <id>`: the timeline (goal → context → model → intent → permission → execution → observation →
 * verification) and the analyzer's findings; `--out` writes the Markdown report, `--eval [file]` the eval case.
 * Strictly read-only: the store is read through copies, no tool runs, no model is called.
 */
export const registerTrace = (program: Command): void => {
  const command = program
    .command('trace')
    .description('analyse a recorded session: timeline, failure class and boundary, Markdown report (read-only)')
    .argument('<id>', 'session id')
    .option('--out <file>', 'write the Markdown report to this file')
    .option('--eval [file]', 'export an eval case that checks the agent\'s steps (to the file, or stdout)');
  addCommonOptions(command).action(async (id: string, options: TraceOptions) => {
    const store = await openStore(options, await workspaceOf(options), 'read-only');
    try {
      const records = await readSession(store, id);
      const view = rebuildView(traceProjection, records);
      const report = await analyzeTrace(view, blobText(store, id));
      const users = toArray(view.users);
      if (options.out) await writeFile(resolve(options.out), renderTraceMarkdown(report, users));
      if (options.eval !== undefined && options.eval !== false) {
        const evalCase = exportEvalCase(report);
        if (typeof options.eval === 'string') await writeFile(resolve(options.eval), `${JSON.stringify(evalCase, null, 2)}\n`);
        else return void process.stdout.write(`${JSON.stringify(evalCase, null, 2)}\n`);
      }
      if (options.json) printJson({ ...report, turns: report.turns.length });
      else process.stdout.write(renderTraceText(report, users));
    } finally {
      await store.close();
    }
  });
};
