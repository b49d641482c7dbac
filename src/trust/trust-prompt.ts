import { terminalText } from '../util/terminal-text.js';

/**
 * Ask a person on the terminal whether to trust a project file or plugin that would run something: the description,
 * then `question [y/N]`. Anything but `y`/`yes` is no. The prompt goes to `output` (stderr for the CLI) so stdout stays the session's.
 */
export const promptForTrust = async (description: string, streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }, question = 'trust this file as it is now?'): Promise<boolean> => {
  const handle = streams.input as NodeJS.ReadableStream & { ref?: () => void; unref?: () => void };
  handle.ref?.();
  // `TERM=dumb` understands no escape sequences: no line editing there (Ctrl-C then reaches the process as SIGINT).
  // node:readline is loaded when a prompt is shown, not by `import('rein')` (issue 31).
  const { createInterface } = await import('node:readline/promises');
  const lines = createInterface({ input: streams.input, output: streams.output, terminal: process.env.TERM !== 'dumb' });
  try {
    // The description quotes the file (commands, arguments, manifest strings): no control character of it reaches the
    // terminal as such, so nothing in it can erase or rewrite the lines a person is asked to trust.
    streams.output.write(`\n${terminalText(description, { newlines: true })}\n`);
    const reply = (await lines.question(`${question} [y/N] `)).trim();
    return /^(y|yes)$/i.test(reply);
  } finally {
    lines.close();
    handle.pause();
    handle.unref?.();
  }
};
