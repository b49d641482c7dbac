import { createInterface } from 'node:readline/promises';
import { terminalText } from '../util/terminal-text.js';
import { summarizeArguments } from './transcript.js';

/** An in-doubt effect whose rerun needs a confirmation, as `resumeSession`'s `confirm` is asked about it. */
export interface InDoubtQuestion {
  effectId: string;
  kind: string;
  args: Record<string, unknown>;
  reason: string;
}

/** An in-doubt effect as a person reads it: `bash sleep 20`, `callModel`. */
export const describeInDoubt = (question: Pick<InDoubtQuestion, 'kind' | 'args'>): string =>
  question.kind === 'executeTool' ? `${String(question.args.name)} ${summarizeArguments((question.args.arguments ?? {}) as Record<string, unknown>)}`.trim() : question.kind;

/**
 * Ask a person on the terminal whether to rerun one in-doubt call: `y` reruns it, `n` settles it in doubt (the model
 * is told its outcome is unknown), an empty line (or Ctrl-C, Ctrl-D) leaves it waiting. This answers this one call
 * only: every later approval is asked on its own, as ever. The question goes to stderr.
 */
export const promptForRerun = async (question: InDoubtQuestion, streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }): Promise<'rerun' | 'decline' | 'wait'> => {
  const handle = streams.input as NodeJS.ReadableStream & { ref?: () => void; unref?: () => void };
  handle.ref?.();
  // `TERM=dumb` understands no escape sequences: no line editing there (Ctrl-C then reaches the process as SIGINT).
  const lines = createInterface({ input: streams.input, output: streams.output, terminal: process.env.TERM !== 'dumb' });
  const interrupt = new AbortController();
  lines.on('SIGINT', () => interrupt.abort());
  try {
    streams.output.write(`\nin doubt: ${terminalText(question.effectId)} (${terminalText(describeInDoubt(question))}): ${terminalText(question.reason)}\n`);
    for (;;) {
      const reply = await lines.question('rerun it? [y]es / [n]o, tell the model its outcome is unknown / Enter: leave it waiting: ', { signal: interrupt.signal }).then(
        (text) => text.trim(),
        () => undefined,
      );
      if (reply === undefined || reply === '') {
        if (reply === undefined) streams.output.write('\n');
        return 'wait';
      }
      if (/^(y|yes)$/i.test(reply)) return 'rerun';
      if (/^(n|no)$/i.test(reply)) return 'decline';
    }
  } finally {
    lines.close();
    handle.pause();
    handle.unref?.();
  }
};
