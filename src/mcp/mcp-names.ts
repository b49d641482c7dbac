import { createHash } from 'node:crypto';

/** The tool-name rule of the model vendors: 1–64 characters of letters, digits, `_` and `-`. */
export const vendorToolName = /^[a-zA-Z0-9_-]{1,64}$/;

/** A server name rein accepts in a configuration: it names actor paths and tools, so no `/`, no spaces. */
export const mcpServerName = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const clean = (text: string): string => text.replace(/[^a-zA-Z0-9_-]/g, '_');

/**
 * The name the model sees for an MCP tool: `mcp__<server>__<tool>`. When that is not already a valid vendor name
 * (other characters, or over 64), the disallowed characters become `_`, it is cut to fit and a 6-hex suffix of the
 * original `server` + `tool` is appended — stable across runs, and distinct for distinct originals. The full names
 * stay in the records (`server`, `tool`).
 */
export const mcpToolName = (server: string, tool: string): string => {
  const plain = `mcp__${server}__${tool}`;
  if (vendorToolName.test(plain)) return plain;
  const suffix = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 6);
  return `${clean(plain).slice(0, 64 - suffix.length - 1)}_${suffix}`;
};
