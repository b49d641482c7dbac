/* The flags of `rein graph`, shared by its declaration and its action without an import cycle. */

/** The names of the statecharts `rein graph` can print (the machines themselves load with the action). */
export const graphableNames = ['session', 'turn', 'permission', 'delegation', 'mcp-connection'] as const;
