import { createInterface } from 'node:readline/promises';
import type { EventStore } from '../../../stores/event-store.js';
import { renderSessionDiff, renderStat, type ContentReader } from '../../changes/diff-render.js';
import { changesLine } from '../../changes/file-change.js';
import { rewindSession, type RewindPlan } from '../../changes/rewind-session.js';
import { diffSession } from '../../changes/session-diff.js';
import { ReinError } from '../../host/host-errors.js';
import { compareSessions, type ComparedSession } from '../../session/compare-sessions.js';
import { Workspace } from '../../tools/workspace.js';
import { terminalText } from '../../util/terminal-text.js';
import { printJson, protectedPathsOf, storeFlags, workspaceOf, type CommonOptions } from '../cli-context.js';
import { ExitCode } from '../exit-codes.js';
import { printText } from '../print-text.js';
import { wholeNumberFlag } from '../whole-number-flag.js';
import { withStore } from './sessions.action.js';
import type { DiffFlags, RewindFlags } from './changes.flags.js';

/** A reader of stored contents for display: a content that is not there shows as missing, not as an error. */
const contentsOf =
  (store: EventStore, sessionId: string): ContentReader =>
  async (ref) => {
    try {
      return await store.readBlob(sessionId, ref);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'BLOB_NOT_FOUND') return undefined;
      throw error;
    }
  };

/** `rein diff <id> [--at <seq>] [--call <id>] [--stat] [--net]`: read-only. */
export const diffCommand = (id: string, options: DiffFlags): Promise<void> =>
  withStore(options, 'read-only', async (store) => {
    const at = options.at === undefined ? undefined : wholeNumberFlag(options.at, { min: 1, message: '--at must be a seq (a whole number from 1)' });
    const given = [at !== undefined, options.call !== undefined, options.net === true].filter(Boolean).length;
    if (given > 1) throw new ReinError('USAGE', '--at, --call and --net each select what to show: give one of them');
    const diff = await diffSession(store, id, { ...(at === undefined ? {} : { at }), ...(options.call === undefined ? {} : { call: options.call }), ...(options.net ? { net: true } : {}) });
    if (options.json) return printJson(diff);
    printText(terminalText(await renderSessionDiff(diff, contentsOf(store, id), { stat: Boolean(options.stat) }), { newlines: true }));
  });

/** Ask on the terminal whether to go on; without one, `--yes` must say so. */
const confirmOnTerminal = async (question: string): Promise<boolean> => {
  if (!process.stdin.isTTY) throw new ReinError('USAGE', 'a rewind changes files: run it on a terminal to be asked, or pass --yes');
  const lines = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await lines.question(question)).trim());
  } finally {
    lines.close();
  }
};

/** `rein rewind <id> --to <seq> [--code] [--conversation] [--yes] [--force]`. */
export const rewindCommand = async (id: string, options: RewindFlags, setExit: (code: number) => void): Promise<void> => {
  const directory = await workspaceOf(options);
  const workspace = await Workspace.open(directory, { protectedPaths: await protectedPathsOf(options, directory) });
  const to = wholeNumberFlag(options.to, { min: 1, message: '--to must be a seq (a whole number from 1)' })!;
  await withStore(options, 'write', async (store) => {
    const reader = contentsOf(store, id);
    const describe = async (plan: RewindPlan): Promise<void> => {
      if (plan.outside.length > 0) printText(terminalText(`changed outside rein since the session last recorded them (recorded as such): ${changesLine(plan.outside)}\n`), process.stderr);
      printText(terminalText(`rewinding the workspace of ${id} to #${plan.toSeq} changes:\n${await renderStat(plan.changes, reader)}\n`, { newlines: true }), options.json ? process.stderr : process.stdout);
    };
    const result = await rewindSession(store, { root: workspace.root, never: workspace.protectedList() }, id, {
      to,
      ...(options.code ? { code: true } : {}),
      ...(options.conversation ? { conversation: true } : {}),
      ...(options.force ? { force: true } : {}),
      confirm: async (plan) => {
        await describe(plan);
        return options.yes === true || (await confirmOnTerminal('rewind these files? [y/N] '));
      },
      onStart: (plan) => {
        if (options.json) printJson({ phase: 'started', sessionId: id, toSeq: plan.toSeq, paths: plan.changes.length });
      },
    });
    if (options.json) {
      printJson(result);
      if (result.code?.declined) setExit(ExitCode.failed);
      return;
    }
    const lines: string[] = [];
    if (result.finished) lines.push(`finished an interrupted rewind to #${result.finished.toSeq} first (${result.finished.paths} path${result.finished.paths === 1 ? '' : 's'})`);
    const code = result.code;
    if (code?.uncaptured) lines.push(`${id} recorded no workspace changes: there is nothing to restore`);
    else if (code?.declined) lines.push('not rewound: nothing changed');
    else if (code && code.plan.changes.length === 0) lines.push(`the workspace already is as it was at #${to}${code.plan.outside.length > 0 ? ` (outside changes recorded: ${changesLine(code.plan.outside)})` : ''}`);
    else if (code) lines.push(`rewound the workspace to #${to}: ${code.plan.changes.length} path${code.plan.changes.length === 1 ? '' : 's'} (${code.verified ? 'verified: it holds the tree recorded there' : `tree ${code.tree?.slice(0, 12)} differs from the one recorded there`})${code.kept && code.kept.length > 0 ? `; kept ${code.kept.join(', ')}` : ''}`);
    if (result.conversation) lines.push(`conversation forked as ${result.conversation.sessionId} at #${result.conversation.atSeq}; continue it with: ${result.conversation.command}${storeFlags(options)}`);
    printText(terminalText(`${lines.join('\n')}\n`, { newlines: true }));
    if (code?.declined || (code && !code.uncaptured && !code.declined && code.verified === false)) setExit(ExitCode.failed);
  });
};

const sideLines = (label: string, side: ComparedSession): string[] => [
  `${label} ${side.sessionId}: ${side.status}, outcome ${side.outcome}`,
  `  ${side.turns} turn${side.turns === 1 ? '' : 's'} · ${side.toolCalls} tool call${side.toolCalls === 1 ? '' : 's'} · ${side.tokens.input + side.tokens.output} tokens · ${(side.durationMs / 1000).toFixed(1)} s`,
  `  verifications: ${side.verifications.length === 0 ? 'none' : side.verifications.map((verification) => `${verification.status} ${verification.command ?? verification.name} (#${verification.seq})`).join(', ')}`,
  `  files changed: ${side.changes ? (side.changes.length === 0 ? 'none' : side.changes.map((change) => `${change.kind === 'created' ? '+' : change.kind === 'deleted' ? '-' : change.kind === 'renamed' ? '→' : '~'} ${change.path}${change.from ? ` (from ${change.from})` : ''}`).join(', ')) : side.filesChanged.length === 0 ? 'none recorded' : `${side.filesChanged.join(', ')} (by its file tools; no workspace capture)`}`,
];

/** `rein compare <a> <b>`: read-only. */
export const compareCommand = (a: string, b: string, options: CommonOptions): Promise<void> =>
  withStore(options, 'read-only', async (store) => {
    const comparison = await compareSessions(store, a, b);
    if (options.json) return printJson(comparison);
    const lines = [
      comparison.alignment === 'fork' ? `aligned at the fork point #${comparison.forkSeq} (the same records up to it; what follows is compared)` : 'aligned turn by turn',
      ...sideLines('a', comparison.a),
      ...sideLines('b', comparison.b),
      ...(comparison.sameTree === undefined ? [] : [comparison.sameTree ? 'workspace: both left the same tree' : 'workspace: they left different trees']),
      comparison.firstDifference
        ? `first difference at turn ${comparison.firstDifference.turn}:\n  a${comparison.firstDifference.a ? ` (#${comparison.firstDifference.a.seq}): ${comparison.firstDifference.a.text.split('\n').join(' · ')}` : ': (no such turn)'}\n  b${comparison.firstDifference.b ? ` (#${comparison.firstDifference.b.seq}): ${comparison.firstDifference.b.text.split('\n').join(' · ')}` : ': (no such turn)'}`
        : 'no turn differs',
    ];
    printText(terminalText(`${lines.join('\n')}\n`, { newlines: true }));
  });
