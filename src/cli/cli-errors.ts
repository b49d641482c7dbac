/**
 * What `rein` prints for an error that ends a command: `rein: <CODE>: <message>`. rein's own errors keep their code
 * (README, *Error codes*); an operating-system error (the store directory, the script file) keeps its errno
 * (`EACCES`, `ENOSPC`, …) and the LevelDB engine's own failures their `LEVEL_*` code (both listed in the README);
 * anything else — a bug, not a condition a user can act on — is `ERROR`. The message never repeats the code.
 */
export const cliErrorOf = (error: unknown): { code: string; message: string } => {
  const coded = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; errno?: unknown; message?: unknown };
  const raw = typeof coded.code === 'string' ? coded.code : undefined;
  // Node's internal codes (`ERR_*`, `ABORT_ERR`) describe rein's own mistakes, not a user's situation.
  const known = raw !== undefined && /^[A-Z][A-Z0-9_]*$/.test(raw) && !raw.startsWith('ERR_') && raw !== 'ABORT_ERR';
  const code = known ? raw : 'ERROR';
  const text = typeof coded.message === 'string' ? coded.message : String(error);
  // `EACCES: permission denied, open …` or `LEVEL_LOCKED: Database failed to open` already name their code.
  const message = raw !== undefined && (text.startsWith(`${raw}: `) || text.startsWith(`${raw}, `)) ? text.slice(raw.length + 2) : text;
  return { code, message: code === 'ERROR' && raw !== undefined ? `${message} (${raw})` : message };
};
