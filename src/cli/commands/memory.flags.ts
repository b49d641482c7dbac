/* The flags of `rein memory`, shared by its declaration and its action without an import cycle. */

/** The scopes `rein memory approve --scope` accepts. */
export const scopeLevels = ['user', 'workspace', 'repo', 'branch'] as const;
