const LABEL = 160;

/** `text` on one line, at most `length` characters (an ellipsis marks a cut). */
export const oneLine = (text: string, length = LABEL): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
};

/** A call as a person recognises it: its name and the command, path or pattern; else its arguments in short. */
export const callLabel = (name: string, args: Record<string, unknown>): string => {
  for (const key of ['command', 'path', 'file_path', 'pattern', 'query', 'task', 'url']) if (typeof args[key] === 'string') return oneLine(`${name} ${args[key] as string}`);
  const json = JSON.stringify(args);
  return oneLine(`${name} ${json === '{}' ? '' : json}`);
};
