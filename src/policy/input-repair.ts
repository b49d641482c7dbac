import type { InputRepair } from '../../models/tool.records.js';

/** The field renames of the repair whitelist, and nothing else. */
export const fieldRenames: Readonly<Record<string, string>> = Object.freeze({
  filePath: 'path',
  oldString: 'old_string',
  newString: 'new_string',
  replaceAll: 'replace_all',
  cmd: 'command',
});

/** Fields holding paths, where markdown autolink cleanup applies. */
export const pathFields: ReadonlySet<string> = new Set(['path', 'cwd']);

/** The JSON type each top-level parameter wants, read from the tool's advertised JSON Schema. */
export type FieldTypes = ReadonlyMap<string, string | undefined>;

/** The top-level property types of a JSON Schema object. */
export const fieldTypesOf = (schema: Record<string, unknown>): FieldTypes => {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  return new Map(Object.entries(properties).map(([name, property]) => [name, typeof property.type === 'string' ? property.type : undefined]));
};

const autolink = /^\[([^\]\n]+)\]\(([^)\s]+)\)$/;

/** `[a.md](a.md)`, `[a.md](http://a.md)` or `<a.md>` → `a.md`; anything else is left alone. */
const unlink = (value: string): string | undefined => {
  const linked = autolink.exec(value);
  if (linked) {
    const [, text, target] = linked;
    const bare = target!.replace(/^(https?:\/\/|mailto:|file:\/\/)/, '');
    return bare === text ? text : undefined;
  }
  const angled = /^<([^<>\s]+)>$/.exec(value);
  return angled ? angled[1] : undefined;
};

/**
 * Apply the safe, deterministic repairs of the whitelist: known field renames (only when the new name is a
 * parameter, the old one is not, and the new one is absent), `"true"`/`"false"` where a boolean is wanted,
 * decimal strings where an integer is wanted, and markdown autolink cleanup on path fields. It never adds a missing
 * field and never looks at history. The caller keeps the repairs only if the result then validates.
 */
export const repairInput = (input: Readonly<Record<string, unknown>>, fields: FieldTypes): { arguments: Record<string, unknown>; repairs: InputRepair[] } => {
  const repaired: Record<string, unknown> = { ...input };
  const repairs: InputRepair[] = [];
  for (const [from, to] of Object.entries(fieldRenames)) {
    if (!Object.hasOwn(repaired, from) || Object.hasOwn(repaired, to) || !fields.has(to) || fields.has(from)) continue;
    repaired[to] = repaired[from];
    delete repaired[from];
    repairs.push({ from, to });
  }
  for (const [field, type] of fields) {
    const value = repaired[field];
    if (typeof value !== 'string') continue;
    if (type === 'boolean' && (value === 'true' || value === 'false')) {
      repaired[field] = value === 'true';
      repairs.push({ field, kind: 'string-to-boolean' });
    } else if (type === 'integer' && /^-?\d{1,15}$/.test(value)) {
      repaired[field] = Number(value);
      repairs.push({ field, kind: 'string-to-integer' });
    } else if (pathFields.has(field)) {
      const cleaned = unlink(value);
      if (cleaned !== undefined) {
        repaired[field] = cleaned;
        repairs.push({ field, kind: 'markdown-autolink' });
      }
    }
  }
  return { arguments: repaired, repairs };
};
