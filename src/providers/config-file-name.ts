/** The workspace configuration file (`rein.config.json`), kept apart so the CLI can name it without loading the schema. */
export const configFileName = 'rein.config.json';
