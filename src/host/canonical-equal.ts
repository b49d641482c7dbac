/**
 * Structural equality of decoded record data: keys whose value is `undefined` count as absent, arrays compare by
 * position, numbers by value (NaN equals NaN). Used by replay to compare regenerated records with stored ones.
 */
export const canonicalEqual = (left: unknown, right: unknown): boolean => {
  if (left === right) return true;
  if (typeof left !== typeof right) return false;
  if (typeof left === 'number') return Number.isNaN(left) && Number.isNaN(right as number);
  if (left === null || right === null || typeof left !== 'object') return false;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) if (!canonicalEqual(left[index], right[index])) return false;
    return true;
  }
  if (Array.isArray(right)) return false;
  const leftObject = left as Record<string, unknown>;
  const rightObject = right as Record<string, unknown>;
  let leftCount = 0;
  for (const key in leftObject) {
    const value = leftObject[key];
    if (value === undefined) continue;
    leftCount++;
    if (!canonicalEqual(value, rightObject[key])) return false;
  }
  let rightCount = 0;
  for (const key in rightObject) if (rightObject[key] !== undefined) rightCount++;
  return leftCount === rightCount;
};
