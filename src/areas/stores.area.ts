/* The LevelDB store, PostgreSQL migrations, store copying and chain checks: loaded by their first call (src/index.ts). */
export { openLevelEventStore } from '../../stores/level-event-store.js';
export { migratePostgresSchema } from '../../stores/postgres/postgres-migrate.js';
export { copyStore } from '../session/copy-store.js';
export { verifyStreamChain } from '../session/verify-session.js';
