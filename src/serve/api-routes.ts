import type * as z from 'zod';
import { actionRoutes } from './api-action-routes.js';
import type { ApiContext } from './api-context.js';
import { readRoutes } from './api-read-routes.js';
import type { Route } from './route-kit.js';

export type { ApiContext } from './api-context.js';

/** Every route of the JSON API (the page's routes are added by the server): the reading routes, then the actions. */
export const apiRoutes = (context: ApiContext): Route[] => [...readRoutes(context), ...actionRoutes(context)];

/** The schema of a route that answers JSON, for tests and clients: `z.infer<typeof …>` is what it sends. */
export type AnswerOf<R extends Route> = R['answer'] extends z.ZodType ? z.infer<R['answer']> : never;
