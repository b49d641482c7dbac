/**
 * Where a JSON text stops parsing, as a person reads it (`at line 3, column 14`, `ends too early`), from the
 * `SyntaxError` `JSON.parse` threw — never quoting the text: V8's messages quote the start of the input (`Unexpected
 * token 'r', "root:x:0:0:"... is not valid JSON`), and a file named by a workspace (a script, a config) must not have
 * its content printed in an error.
 */
export const jsonProblem = (text: string, error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error);
  if (/unexpected end of json input|unterminated/i.test(message)) return 'it ends too early';
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return `at ${lineAndColumn(text, Number(position))}`;
  // The newer messages quote the text from the bad token instead of a position: find that place without repeating it.
  const quoted = /^Unexpected token .*?, "(.*)"(?:\.\.\.)? is not valid JSON$/s.exec(message)?.[1];
  const at = quoted === undefined ? -1 : text.indexOf(quoted);
  return at >= 0 ? `at ${lineAndColumn(text, at)}` : 'it is not JSON';
};

const lineAndColumn = (text: string, position: number): string => {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  return `line ${line}, column ${position - before.lastIndexOf('\n')}`;
};
