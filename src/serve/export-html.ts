import type { EventStore } from '../../stores/event-store.js';
import { upcastRecords } from '../../stores/upcasters.js';
import { ReinError } from '../host/host-errors.js';
import { summarizeSession } from '../session/session-catalog.js';
import { readSession } from '../session/session-records.js';
import { createRedactor } from '../telemetry/redact.js';
import { turnsOf } from '../trace/trace-evidence.js';
import { machineGraph } from '../cli/machine-graph.js';
import { sessionMachine } from '../../machines/session.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';
import type { ContextBody, SessionDetail, Timeline, TraceBody } from './api-schemas.js';
import { loadPageAssets } from './page-assets.js';
import { agentCosts, rowOf } from './api-context.js';
import type { Prices } from '../../models/price-table.js';
import { DigestCache } from './session-digest.js';
import { contextOfTurn } from './session-views.js';
import { timelineOf } from './timeline.js';

/** Values of environment variables whose name says they hold a secret (`OPENAI_API_KEY`, `GITHUB_TOKEN`, …). */
export const environmentSecrets = (env: NodeJS.ProcessEnv = process.env): string[] =>
  Object.entries(env)
    .filter(([name, value]) => /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i.test(name) && typeof value === 'string' && value.length >= 8)
    .map(([, value]) => value!);

/** Every string in `value` (keys kept) passed through `redact`. */
const redactDeep = (value: unknown, redact: (text: string) => string): unknown => {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactDeep(inner, redact)]));
  return value;
};

/** JSON that is safe inside an HTML `<script>`: no `<` survives as such (so no `</script>` nor `<!--`). */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

/**
 * One self-contained HTML file of the viewer for one session (read-only; nothing is fetched when it opens): the page's
 * script and styles inlined, and the session's records, timeline, trace report and the model input of every turn
 * embedded — every string passed through the telemetry redactor first (`createRedactor`: the given secrets, and every
 * credential shape: vendor keys, tokens, URL passwords, `name=value` pairs whose name says secret). Blobs other than
 * the model inputs (full tool outputs) are not included. `SESSION_NOT_FOUND` for an unknown session.
 */
export const exportSessionHtml = async (store: EventStore, sessionId: string, options: { secrets?: readonly string[]; assets?: string; now?: number; prices?: Prices } = {}): Promise<string> => {
  const summary = await summarizeSession(store, sessionId);
  if (!summary) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  const digests = new DigestCache(store, 1, options.prices);
  const analysed = (await digests.report(sessionId))!;
  const { digest, report } = analysed;
  const records = upcastRecords(await readSession(store, sessionId));
  const { steps, stable, lanes } = timelineOf(digest.view, report.findings);
  const timeline: Timeline = { head: digest.head, total: steps.length, stable, offset: 0, steps, lanes, complete: true, logHead: digest.head };
  const trace: TraceBody = { sessionId, task: report.task, outcome: report.outcome, claimedSuccess: report.claimedSuccess, ...(report.ended ? { ended: report.ended } : {}), ...(report.finalMessage ? { finalMessage: report.finalMessage } : {}), findings: report.findings, ...(report.primary ? { primary: report.primary } : {}), turns: report.turns.length, unknowns: report.unknowns, evalCandidate: report.evalCandidate };
  const contexts: Record<string, ContextBody> = {};
  for (const turn of turnsOf(digest.view)) {
    if (turn.contexts.length === 0) continue;
    contexts[`${turn.actor}#${turn.turn}`] = await contextOfTurn(store, digest, { actor: turn.actor, turn: turn.turn });
  }
  const session: SessionDetail = {
    ...rowOf(summary, digest, undefined),
    approvals: [],
    confirmations: [],
    forks: [],
    agents: agentCosts(digest),
    actions: false,
  };
  const redact = createRedactor([...(options.secrets ?? [])]);
  const data = redactDeep({ exportedAt: options.now ?? Date.now(), session, timeline, trace, records, contexts, machines: { machines: [machineGraph('session', sessionMachine), machineGraph('turn', turnMachine)] } }, redact);
  const assets = await loadPageAssets(options.assets);
  const title = `rein · ${sessionId}`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">`,
    `<title>${title.replace(/[<&>"]/g, '')}</title>`,
    '<link rel="icon" href="data:,">',
    `<style>${assets.styles.replace(/<\/style/gi, '<\\/style')}</style>`,
    '</head>',
    '<body>',
    '<div id="app"></div>',
    `<script>window.__REIN_EXPORT__ = ${scriptJson(data)};</script>`,
    `<script type="module">${assets.script.replace(/<\/script/gi, '<\\/script')}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
};
