import { relative, sep } from 'node:path';
import type { ToolErrorCode } from '../../models/tool.records.js';
import { toolFailure, type ToolFailure } from './tool.js';

/** How one operating-system error becomes a model-visible failure: the code the model reads and the recorded reason. */
interface ErrnoFailure {
  code: ToolErrorCode;
  reason: string;
  says: string;
}

/**
 * The operating-system errors a tool can meet because of what the model asked for, and what each one tells the model.
 * Deliberately a closed table: an errno not listed here (EPIPE, EMFILE, EIO, …) and any exception without one is a
 * failure of rein itself and stays `effect.failed`.
 */
export const errnoFailures: Readonly<Record<string, ErrnoFailure>> = {
  EACCES: { code: 'Denied', reason: 'permission_denied', says: 'permission denied' },
  EPERM: { code: 'Denied', reason: 'operation_not_permitted', says: 'operation not permitted' },
  EROFS: { code: 'Denied', reason: 'read_only_file_system', says: 'read-only file system' },
  ENOENT: { code: 'NotFound', reason: 'not_found', says: 'no such file or directory' },
  ENOTDIR: { code: 'NotFound', reason: 'not_a_directory', says: 'a part of the path is not a directory' },
  ENAMETOOLONG: { code: 'InvalidInput', reason: 'name_too_long', says: 'file name too long' },
  EISDIR: { code: 'InvalidInput', reason: 'is_directory', says: 'is a directory' },
  // A command or pattern too long for one argument of a process (spawn refuses it: MAX_ARG_STRLEN is 128 KiB).
  E2BIG: { code: 'InvalidInput', reason: 'argument_too_long', says: 'argument list too long for a process' },
};

/** Node's own refusal of a NUL byte in a path or an argument (it has a code but no errno). */
const isNulByteRefusal = (error: NodeJS.ErrnoException): boolean =>
  (error.code === 'ERR_INVALID_ARG_VALUE' || error.code === 'ERR_INVALID_ARG_TYPE') && /null bytes/i.test(error.message);

/** The dotted paths of every string argument holding a NUL byte (`command`, `ops[2].new_text`). */
export const fieldsWithNul = (value: unknown, path = ''): string[] => {
  if (typeof value === 'string') return value.includes('\u0000') ? [path || '(arguments)'] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => fieldsWithNul(item, `${path}[${index}]`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, item]) => fieldsWithNul(item, path ? `${path}.${key}` : key));
  return [];
};

/** The failure for arguments that carry NUL bytes into a file name or command (no file name or argv can hold one). */
export const nulByteFailure = (fields: readonly string[]): ToolFailure =>
  toolFailure('InvalidInput', `${fields.map((field) => `\`${field}\``).join(', ')} contains a NUL byte, which no file name or command can hold`, 'nul_byte');

/** A path as the model should see it: relative to the workspace, and clipped when it is absurdly long. */
const shown = (path: string, workspace: string | undefined): string => {
  const inside = workspace !== undefined && (path === workspace || path.startsWith(workspace + sep));
  const text = inside ? relative(workspace, path) || '.' : path;
  return text.length > 160 ? `${text.slice(0, 100)}…(${text.length} characters)…${text.slice(-40)}` : text;
};

/**
 * Map an exception a tool threw to the model-visible failure it stands for, or `undefined` when it is not an
 * operating-system error the model caused (then it stays an infrastructure failure, `effect.failed`). Mapped by
 * errno: `Denied` for EACCES / EPERM / EROFS, `NotFound` for ENOENT / ENOTDIR, `InvalidInput` for ENAMETOOLONG /
 * EISDIR / E2BIG and for a NUL byte Node refused (naming the argument fields that hold one). Paths are shown relative to
 * the workspace. Never a catch-all.
 */
export const osFailureOf = (error: unknown, call: { arguments: Record<string, unknown>; workspace?: string }): ToolFailure | undefined => {
  if (!(error instanceof Error)) return undefined;
  const failure = error as NodeJS.ErrnoException & { dest?: string };
  if (isNulByteRefusal(failure)) {
    const fields = fieldsWithNul(call.arguments);
    return nulByteFailure(fields.length > 0 ? fields : ['(an argument)']);
  }
  if (typeof failure.errno !== 'number' || failure.code === undefined) return undefined;
  const mapped = errnoFailures[failure.code];
  if (!mapped) return undefined;
  const where = [failure.syscall, failure.path ? shown(failure.path, call.workspace) : undefined, failure.dest ? `→ ${shown(failure.dest, call.workspace)}` : undefined].filter(Boolean).join(' ');
  return toolFailure(mapped.code, `${mapped.says} (${failure.code}${where ? `: ${where}` : ''})`, mapped.reason);
};

/**
 * The model-visible failure for anything else a tool threw (a host tool's own error, a bug): `ToolFailed` with the
 * error's message and its class (`errorClass`, recorded on `tool.settled`); `Cancelled` when the call's signal had
 * aborted (the session was interrupted, cancelled or out of wall time, and the tool gave up by throwing).
 */
export const thrownFailure = (tool: string, error: unknown, signal: AbortSignal): ToolFailure => {
  const errorClass = error instanceof Error ? (error.constructor?.name && error.constructor.name !== 'Object' ? error.constructor.name : error.name) : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  if (signal.aborted) return { ...toolFailure('Cancelled', `${tool} was cancelled while it ran (${errorClass}: ${message})`), errorClass };
  return { ...toolFailure('ToolFailed', `${tool} threw ${errorClass}: ${message}`), errorClass };
};
