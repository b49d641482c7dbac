import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * `crypto.randomUUID()`, with `node:crypto` loaded on the first call rather than with the store: only writers need
 * one (temp file names, fork names), and loading the module costs a reading command about 10 ms of its start-up.
 */
export const randomUuid = (): string => (load('node:crypto') as typeof import('node:crypto')).randomUUID();
