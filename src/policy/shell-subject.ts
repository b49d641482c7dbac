import type { PermissionSubject, ShellPart } from './permission-policy.js';
import { classifyShellCommand, type ClassifyOptions } from './shell-classify.js';
import { commandsRun } from './shell-commands.js';

/**
 * What the permission stage knows about a shell line — its target, simple commands, classes, the commands it runs
 * — and, for a line of several parts, each part (`ShellPart`), with the paths the classifier flagged. The parts are
 * given only when the classifier and `commandsRun` read the line the same way (same parts, same words); otherwise
 * the line is judged whole, as before. Cost: O(line length) — a command a part runs as written reuses the part's
 * classes (judged where the line runs it, so no weaker); any other (behind a wrapper, a variable) is classified alone.
 */
export const classifyForPermission = (command: string, options: ClassifyOptions): { subject: PermissionSubject; outsidePaths: string[] } => {
  const classified = classifyShellCommand(command, options);
  const run = commandsRun(command);
  const subject: PermissionSubject = { target: command.trim(), parts: classified.parts, classes: classified.classes, run };
  const segments = classified.segments ?? [];
  const aligned = segments.length > 1 && run.parts !== undefined && run.parts.length === segments.length && run.parts.every((part, index) => part.part === classified.parts[index]);
  if (aligned) {
    subject.shellParts = segments.map((segment, index): ShellPart => {
      const part = run.parts![index]!;
      return { text: segment.text, classes: segment.classes, runs: part.commands.map((ran) => ({ command: ran, classes: ran === part.part ? segment.classes : classifyShellCommand(ran, options).classes })), unknown: part.unknown };
    });
  }
  return { subject, outsidePaths: classified.outsidePaths ?? [] };
};

/** The permission subject of a shell line (see `classifyForPermission`). */
export const shellSubject = (command: string, options: ClassifyOptions): PermissionSubject => classifyForPermission(command, options).subject;
