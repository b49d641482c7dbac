import { terminalText } from '../util/terminal-text.js';

/**
 * Write text for a person to stdout (or stderr) with every control and bidi character escaped, line breaks kept
 * (`terminalText`): listings show names, descriptions, tasks, memory content and error messages that a model, a file,
 * a server or a repository wrote, and an `ESC[2K` or a `\r` there must not rewrite what the person reads. The
 * listing commands print no colours of their own, so the whole text goes through it.
 */
export const printText = (text: string, stream: NodeJS.WriteStream = process.stdout): void => {
  stream.write(terminalText(text, { newlines: true }));
};
