import { isAbsolute, relative, sep } from 'node:path';
import { toolFailure, type ToolFailure, type ToolContext } from './tool.js';

/** Directories searches skip unless the search starts inside them. */
export const defaultIgnoredDirectories: readonly string[] = ['.git', 'node_modules'];

/** The most results `glob` returns when the model does not say. */
export const defaultMaxResults = 1_000;

/** Where a search runs: the canonical directory (or file), and its path relative to the workspace root. */
export interface SearchScope {
  base: string;
  relative: string;
}

/** Resolve the `path` a search starts from: a directory or a regular file inside the workspace (never a FIFO). */
export const resolveSearchScope = async (context: Pick<ToolContext, 'workspace'>, path: string): Promise<SearchScope | ToolFailure> => {
  const resolved = await context.workspace.resolveFile(path);
  if (!resolved.ok) return resolved;
  return { base: resolved.path, relative: resolved.relative };
};

/** A glob pattern may not climb out of its base directory or name an absolute path. */
export const escapingPattern = (pattern: string): ToolFailure | undefined =>
  isAbsolute(pattern) || pattern.startsWith('~') || pattern.split(/[\\/]/).includes('..') ? toolFailure('Denied', `the pattern ${JSON.stringify(pattern)} reaches outside the workspace; patterns are relative to path and may not use ".."`, 'outside_workspace') : undefined;

/** A path relative to the workspace root for one found relative to the scope's base. */
export const workspaceRelative = (scope: SearchScope, found: string): string => (scope.relative === '.' ? found : `${scope.relative}${sep}${found}`);

/** Protected paths as workspace-relative names, for exclusion globs. */
export const protectedNames = (context: Pick<ToolContext, 'workspace'>): string[] =>
  context.workspace.protectedList().map((path) => relative(context.workspace.root, path)).filter((name) => name !== '' && !name.startsWith('..') && !isAbsolute(name));
