/**
 * Clears a timer that was `unref()`ed. Node 20 keeps the internal list of an unref'd timer's duration after the timer
 * is cleared before it fired (one list per distinct duration, kept until that duration has passed), so a timer armed
 * per effect with the time left of a budget (an hour, say) held two lists per round trip (~140 B) for that long.
 * Referencing it again first takes the path that removes an emptied list; it is synchronous, so the process is never
 * held by it.
 */
export const clearUnrefTimeout = (timer: ReturnType<typeof setTimeout> | undefined): void => {
  if (timer === undefined) return;
  timer.ref();
  clearTimeout(timer);
};
