import { once } from '../util/lazy-call.js';

/** src/areas/process.area.ts, imported on first use and kept: what runs commands, for the callers on the import path. */
export const processArea = once(() => import('./process.area.js'));
