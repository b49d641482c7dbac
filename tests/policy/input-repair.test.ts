import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldRenames, fieldTypesOf, repairInput } from '../../src/policy/input-repair.js';
import { propertyRuns } from '../support/temp-dir.js';

const edit = fieldTypesOf(z.toJSONSchema(z.object({ path: z.string(), old_string: z.string(), new_string: z.string(), replace_all: z.boolean().optional() }).strict()) as Record<string, unknown>);
const read = fieldTypesOf(z.toJSONSchema(z.object({ path: z.string(), offset: z.number().int().optional() }).strict()) as Record<string, unknown>);

describe('input repair', () => {
  it('renames exactly the whitelisted fields', () => {
    expect(repairInput({ filePath: 'a', oldString: 'x', newString: 'y', replaceAll: 'true' }, edit)).toEqual({
      arguments: { path: 'a', old_string: 'x', new_string: 'y', replace_all: true },
      repairs: [{ from: 'filePath', to: 'path' }, { from: 'oldString', to: 'old_string' }, { from: 'newString', to: 'new_string' }, { from: 'replaceAll', to: 'replace_all' }, { field: 'replace_all', kind: 'string-to-boolean' }],
    });
  });

  it('never overwrites a field that is already there and never renames into an unknown parameter', () => {
    expect(repairInput({ filePath: 'a', path: 'b' }, edit).repairs).toEqual([]);
    expect(repairInput({ cmd: 'ls' }, edit).repairs).toEqual([]);
  });

  it('converts decimal strings to integers and cleans markdown autolinks on paths', () => {
    expect(repairInput({ path: '[notes.md](http://notes.md)', offset: '12' }, read)).toEqual({ arguments: { path: 'notes.md', offset: 12 }, repairs: [{ field: 'path', kind: 'markdown-autolink' }, { field: 'offset', kind: 'string-to-integer' }] });
    expect(repairInput({ path: '<src/a.ts>' }, read).arguments).toEqual({ path: 'src/a.ts' });
    expect(repairInput({ path: '[a](b)', offset: '1.5' }, read).repairs).toEqual([]);
  });

  it('only ever produces whitelisted repairs and never invents a field', () => {
    const names = fc.constantFrom('path', 'filePath', 'oldString', 'old_string', 'newString', 'new_string', 'replaceAll', 'replace_all', 'cmd', 'command', 'offset', 'content', 'x');
    const values = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('true', 'false', '12', '-3', '[a.md](a.md)', '<b.md>'), fc.integer(), fc.boolean(), fc.constant(null));
    fc.assert(
      fc.property(fc.dictionary(names, values), fc.constantFrom(edit, read), (input, fields) => {
        const { arguments: repaired, repairs } = repairInput(input, fields);
        for (const repair of repairs) {
          if ('from' in repair) expect(fieldRenames[repair.from]).toBe(repair.to);
          else expect(['string-to-boolean', 'string-to-integer', 'markdown-autolink']).toContain(repair.kind);
        }
        expect(Object.keys(repaired).length).toBe(Object.keys(input).length);
        const renamed = new Set(repairs.flatMap((repair) => ('to' in repair ? [repair.to] : [])));
        for (const key of Object.keys(repaired)) expect(Object.hasOwn(input, key) || renamed.has(key)).toBe(true);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
