import { createInterface } from 'node:readline/promises';

/**
 * Ask a person on the terminal whether to trust a project file or plugin that would run something: the description,
 * then `question [y/N]`. Anything but `y`/`yes` is no. The prompt goes to `output` (stderr for the CLI) so stdout stays the session's.
 */
export const promptForTrust = async (description: string, streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }, question = 'trust this file as it is now?'): Promise<boolean> => {
  const handle = streams.input as NodeJS.ReadableStream & { ref?: () => void; unref?: () => void };
  handle.ref?.();
  const lines = createInterface({ input: streams.input, output: streams.output, terminal: true });
  try {
    streams.output.write(`\n${description}\n`);
    const reply = (await lines.question(`${question} [y/N] `)).trim();
    return /^(y|yes)$/i.test(reply);
  } finally {
    lines.close();
    handle.pause();
    handle.unref?.();
  }
};
