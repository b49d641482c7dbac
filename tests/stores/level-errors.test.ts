import { describe, expect, it } from 'vitest';
import { StoreError, storeErrorOfLevel } from '../../stores/store-errors.js';

const levelError = (code: string, cause?: unknown) => Object.assign(new Error(`level says ${code}`), { code, ...(cause ? { cause } : {}) });

describe('LEVEL_* errors become documented rein codes', () => {
  it.each([
    ['LEVEL_CORRUPTION', 'STORE_CORRUPT_RECORD'],
    ['LEVEL_LOCKED', 'STORE_LOCKED'],
    ['LEVEL_READONLY', 'STORE_READ_ONLY'],
    ['LEVEL_IO_ERROR', 'STORE_IO'],
    ['LEVEL_DATABASE_NOT_OPEN', 'STORE_IO'],
    ['LEVEL_NOT_SUPPORTED', 'STORE_IO'],
  ])('%s → %s', (level, code) => {
    expect((storeErrorOfLevel('s-1', levelError(level)) as StoreError).code).toBe(code);
  });

  it('reads the code of a wrapped cause (classic-level wraps the native error in LEVEL_DATABASE_NOT_OPEN)', () => {
    expect((storeErrorOfLevel('s-1', levelError('LEVEL_DATABASE_NOT_OPEN', levelError('LEVEL_CORRUPTION'))) as StoreError).code).toBe('STORE_CORRUPT_RECORD');
  });

  it('leaves other errors alone', () => {
    const plain = new Error('no level here');
    expect(storeErrorOfLevel('s-1', plain)).toBe(plain);
  });
});
