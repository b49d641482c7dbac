import type { TestProject } from 'vitest/node';
import { findPostgresBinaries, startPostgresCluster } from '../../src/testing/postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared throwaway cluster's URL, or '' when PostgreSQL is not installed. */
    postgresUrl: string;
    /** Why there is no cluster, when there is none. */
    postgresMissing: string;
  }
}

/**
 * One throwaway PostgreSQL cluster for the whole test run, shared by every test file that needs a server (each test
 * takes its own schema or database). Stopped and removed when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (findPostgresBinaries() === undefined) {
    project.provide('postgresUrl', '');
    project.provide('postgresMissing', 'PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin): apt-get install postgresql');
    return async () => undefined;
  }
  const cluster = await startPostgresCluster();
  project.provide('postgresUrl', cluster.url);
  project.provide('postgresMissing', '');
  return () => cluster.stop();
}
