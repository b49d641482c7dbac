/**
 * What to do when the reader of rein's stdout goes away (`rein run … | head -1`): while a session runs, it is
 * interrupted like Ctrl-C (recorded, resumable, exit 130) rather than left behind unrecorded; otherwise the command
 * simply ends, as any Unix reader does.
 */
let whileRunning: (() => void) | undefined;

/** Set (or clear) what a closed stdout means while a session runs in this process. */
export const onOutputClosed = (handler: (() => void) | undefined): void => {
  whileRunning = handler;
};

/** Set once a running session took a closed stdout: every later write error is expected, and the exit code is its. */
let taken = false;

/** Called for every error of stdout: true when a running session took it (the caller must not exit). */
export const outputClosed = (): boolean => {
  if (taken) return true;
  if (!whileRunning) return false;
  taken = true;
  whileRunning();
  return true;
};
