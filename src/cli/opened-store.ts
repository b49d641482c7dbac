/**
 * The store the running command opened last, so an error that says a session is not "in this store" can say which
 * store that was: a person who ran `rein show <id>` in the wrong folder sees where rein looked. Kept apart from
 * `cli-context.ts` so the error printer reads it without loading a store.
 */
let opened: string | undefined;

/** Remember `location` (a directory, or a `postgres://` URL) as the store this command reads. */
export const noteOpenedStore = (location: string | undefined): void => {
  opened = location;
};

/** How the last opened store is named in a message: its directory, or "a PostgreSQL store" (a URL may hold a password). */
export const openedStoreName = (): string | undefined => (opened === undefined ? undefined : /^postgres(ql)?:\/\//i.test(opened) ? 'a PostgreSQL store' : opened);
