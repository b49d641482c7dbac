/** Process exit codes of the `rein` CLI (README lists them). */
export const ExitCode = {
  /** The session completed, or the command succeeded. */
  ok: 0,
  /** The session failed, ran out of budget or was cancelled; replay diverged; a runtime error. */
  failed: 1,
  /** Bad command-line usage or configuration. */
  usage: 2,
  /** The session is paused waiting for a person (an approval or a confirmation); `rein resume` continues it. */
  paused: 3,
  /** The log's chain is broken: a record was changed, inserted, deleted or moved, or the log was cut short (`CHAIN_BROKEN`). */
  chainBroken: 4,
  /** The log's chain is intact but this machine's key did not write it, or the log predates the chain (`CHAIN_UNAUTHENTICATED`). */
  chainUnauthenticated: 5,
  /**
   * The session paused before a model call its cost budget could not pay for (`COST_BUDGET_REACHED`);
   * `rein resume <id> --max-cost <higher>` continues it.
   */
  costBudget: 6,
  /** Interrupted with Ctrl-C; the session is resumable. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
