import { listDirTool } from './list-dir.tool.js';
import { readTool } from './read.tool.js';
import type { AnyToolDefinition } from './tool.js';
import { writeTool } from './write.tool.js';

/** The local tools every session gets unless the host passes its own list. */
export const builtinTools = (): AnyToolDefinition[] => [readTool, writeTool, listDirTool];
