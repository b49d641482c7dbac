/**
 * JSON for inspection events: cycles become `"[circular]"`, functions `{ type: <name> }`, anything deeper than
 * `depth` `"[depth]"`. Never throws, so a strange snapshot cannot break an inspection stream.
 */
export const safeJson = (value: unknown, depth = 12): string => {
  const seen = new WeakSet<object>();
  const walk = (current: unknown, level: number): unknown => {
    if (typeof current === 'function') return { type: current.name || 'function' };
    if (typeof current === 'bigint') return current.toString();
    if (current === null || typeof current !== 'object') return current;
    if (seen.has(current)) return '[circular]';
    if (level >= depth) return '[depth]';
    seen.add(current);
    try {
      if (typeof (current as { toJSON?: unknown }).toJSON === 'function') return walk((current as { toJSON: () => unknown }).toJSON(), level);
      if (Array.isArray(current)) return current.map((item) => walk(item, level + 1));
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(current)) {
        const walked = walk(item, level + 1);
        if (walked !== undefined) out[key] = walked;
      }
      return out;
    } finally {
      seen.delete(current);
    }
  };
  return JSON.stringify(walk(value, 0)) ?? 'null';
};
