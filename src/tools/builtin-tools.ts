import { applyPatchTool } from './apply-patch.tool.js';
import { bashTool } from './bash.tool.js';
import { delegateTaskTool } from './delegate-task.tool.js';
import { editLinesTool } from './edit-lines.tool.js';
import { editTool } from './edit.tool.js';
import { globTool } from './glob.tool.js';
import { grepTool } from './grep.tool.js';
import { listDirTool } from './list-dir.tool.js';
import { memoryReadTool } from './memory-read.tool.js';
import { memoryWriteTool } from './memory-write.tool.js';
import { readArtifactTool } from './read-artifact.tool.js';
import { readTool } from './read.tool.js';
import type { AnyToolDefinition } from './tool.js';
import { updatePlanTool } from './update-plan.tool.js';
import { writeTool } from './write.tool.js';

/**
 * The local tool bundle every session gets unless the host passes its own list (`delegate_task`, the memory tools and
 * `update_plan` included). `apply_patch` is in it unless `applyPatch` is false: the harness leaves it out for real
 * models whose provider settings do not ask for it (see `createRein({ applyPatch })`).
 */
export const builtinTools = (options: { applyPatch?: boolean } = {}): AnyToolDefinition[] => [
  readTool,
  writeTool,
  editTool,
  editLinesTool,
  ...(options.applyPatch === false ? [] : [applyPatchTool as AnyToolDefinition]),
  listDirTool,
  globTool,
  grepTool,
  readArtifactTool,
  bashTool,
  memoryReadTool,
  memoryWriteTool,
  updatePlanTool as AnyToolDefinition,
  delegateTaskTool as AnyToolDefinition,
];
