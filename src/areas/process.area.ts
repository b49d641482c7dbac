/*
 * Running commands: the process runner, sandboxed launches and the protected-path watch. Loaded by the first command a
 * tool, a hook or an MCP tool runs, or by a session's close (src/areas/process-loader.ts), not by `import('rein')`.
 */
export { runCommand, endBackgroundCommands } from '../tools/process-runner.js';
export { prepareLaunch, sandboxedHelper } from '../tools/command-launch.js';
export { absentProtectedPaths, existingProtectedFolders, removeCreatedInFolders, removeCreatedProtectedPaths, watchBackground, cleanAfterBackground } from '../tools/protected-watch.js';
export { restoreProtected, snapshotProtected } from '../tools/protected-snapshot.js';
