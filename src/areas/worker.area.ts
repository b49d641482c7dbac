/* The PostgreSQL session worker, loaded by the first `runWorker` call (src/index.ts). */
export { runWorker } from '../worker/worker.js';
