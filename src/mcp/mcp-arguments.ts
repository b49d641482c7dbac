import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalPath, isInside } from '../policy/protected-paths.js';
import type { Workspace } from '../tools/workspace.js';

/*
 * What an MCP call's arguments say, for the permission stage: the path it acts on (the rule target, so a rule can
 * be narrower than the whole tool), a short account of every argument for the person asked (a path as it is, a long
 * text by its size and digest), and whether any argument names a protected path (refused, as a file tool would).
 */

/** Argument names that hold a path, by the words servers use (`path`, `file_path`, `destination`, `uri`, …). */
const pathKey = /^(?:path|paths|file|files|filename|filepath|file_?path|file_?name|dir|dirname|directory|folder|source|src|destination|dest|target|to|from|uri|root|cwd|location|output|input)$/i;

/** Strings no longer than this are tried as paths (longer ones are content). */
const maxPathLength = 4_096;
/** Strings looked at per call, at most: arguments past it are not judged as paths (counted in the account). */
const maxStrings = 500;

/** Every string of the arguments with its dotted path, depth-first, at most `maxStrings`. */
const stringsOf = (args: Record<string, unknown>): Array<{ at: string; key: string; value: string }> => {
  const found: Array<{ at: string; key: string; value: string }> = [];
  const visit = (value: unknown, at: string, key: string, depth: number): void => {
    if (found.length >= maxStrings || depth > 32) return;
    if (typeof value === 'string') found.push({ at, key, value });
    else if (Array.isArray(value)) value.forEach((item, index) => visit(item, `${at}[${index}]`, key, depth + 1));
    else if (typeof value === 'object' && value !== null) for (const [name, item] of Object.entries(value)) visit(item, at ? `${at}.${name}` : name, name, depth + 1);
  };
  visit(args, '', '', 0);
  return found;
};

/** Where a string would lead as a path from the workspace: `file://` URLs, `~/`, relative and absolute paths; undefined for text that is no path. */
const asPath = (text: string, root: string): string | undefined => {
  if (text === '' || text.length > maxPathLength || /[\n\0]/.test(text)) return undefined;
  let path = text;
  if (/^file:\/\//i.test(path)) {
    try {
      path = fileURLToPath(path);
    } catch {
      return undefined;
    }
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) return undefined;
  if (path === '~' || path.startsWith('~/')) path = `${homedir()}${path.slice(1)}`;
  return canonicalPath(isAbsolute(path) ? path : resolve(root, path));
};

/**
 * The first argument that names a protected path (its dotted name and the path as the workspace shows it), or
 * undefined. For a tool its server says is read-only, only the paths no file tool may read count (the git
 * configuration stays readable); for any other, every protected path.
 */
export const protectedArgument = (args: Record<string, unknown>, workspace: Workspace, options: { readOnly?: boolean } = {}): { argument: string; path: string } | undefined => {
  for (const { at, value } of stringsOf(args)) {
    const path = asPath(value, workspace.root);
    if (path !== undefined && (options.readOnly ? workspace.isHidden(path) : workspace.isProtected(path))) return { argument: at || '(arguments)', path: isInside(workspace.root, path) ? workspace.display(path) : path };
  }
  return undefined;
};

/** The path the call acts on: the first argument whose name says path, as the workspace shows it; undefined when none. */
export const mcpTarget = (args: Record<string, unknown>, workspace: Workspace): string | undefined => {
  for (const { key, value } of stringsOf(args)) {
    if (!pathKey.test(key)) continue;
    const path = asPath(value, workspace.root);
    if (path !== undefined) return isInside(workspace.root, path) ? workspace.display(path) : path;
  }
  return undefined;
};

const digestOf = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;

/**
 * The arguments as a person approving the call should see them, on one line: short values as they are, a long or
 * multi-line text by its size and digest (`content: 1,204 chars sha256:3f2a…`), an object or list by its size and
 * digest. At most `limit` characters; what does not fit is counted.
 */
export const describeMcpArguments = (args: Record<string, unknown>, limit = 360): string => {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === 'string') parts.push(value.length <= 80 && !/[\n\r]/.test(value) ? `${name}=${JSON.stringify(value)}` : `${name}: ${value.length.toLocaleString('en')} chars ${digestOf(value)}`);
    else if (typeof value === 'object' && value !== null) {
      const json = JSON.stringify(value);
      parts.push(json.length <= 80 ? `${name}=${json}` : `${name}: ${Array.isArray(value) ? `${value.length} items` : 'object'}, ${json.length.toLocaleString('en')} bytes ${digestOf(json)}`);
    } else parts.push(`${name}=${JSON.stringify(value)}`);
  }
  let text = '';
  for (const [index, part] of parts.entries()) {
    const next = text === '' ? part : `${text}, ${part}`;
    if (next.length > limit) return `${text}, … ${parts.length - index} more`;
    text = next;
  }
  return text === '' ? 'no arguments' : text;
};
