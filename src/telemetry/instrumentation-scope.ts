/** The instrumentation scope of every span rein emits (its name and release; a test keeps it equal to package.json). */
export const reinScope = { name: 'rein', version: '0.1.0' } as const;
