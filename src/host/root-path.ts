/** The actor path of a session's root agent. */
export const rootPath = 'root';
