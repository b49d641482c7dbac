/** One line of a diff: kept, removed (only in the old text) or added (only in the new one). */
export interface DiffLine {
  kind: 'same' | 'removed' | 'added';
  text: string;
}

const MAX_CELLS = 4_000_000;

/**
 * A line diff of two texts: the common prefix and suffix are kept as they are, the middle is aligned by a longest
 * common subsequence (or, past a few million cells, shown as removed then added).
 */
export const diffLines = (before: string, after: string): DiffLine[] => {
  const left = before === '' ? [] : before.split('\n');
  const right = after === '' ? [] : after.split('\n');
  let start = 0;
  while (start < left.length && start < right.length && left[start] === right[start]) start++;
  let endLeft = left.length;
  let endRight = right.length;
  while (endLeft > start && endRight > start && left[endLeft - 1] === right[endRight - 1]) {
    endLeft--;
    endRight--;
  }
  const out: DiffLine[] = left.slice(0, start).map((text) => ({ kind: 'same', text }));
  const middleLeft = left.slice(start, endLeft);
  const middleRight = right.slice(start, endRight);
  const rows = middleLeft.length;
  const columns = middleRight.length;
  if (rows * columns > MAX_CELLS) {
    out.push(...middleLeft.map((text): DiffLine => ({ kind: 'removed', text })), ...middleRight.map((text): DiffLine => ({ kind: 'added', text })));
  } else {
    const table = new Uint32Array((rows + 1) * (columns + 1));
    for (let row = rows - 1; row >= 0; row--) {
      for (let column = columns - 1; column >= 0; column--) {
        table[row * (columns + 1) + column] = middleLeft[row] === middleRight[column] ? table[(row + 1) * (columns + 1) + column + 1]! + 1 : Math.max(table[(row + 1) * (columns + 1) + column]!, table[row * (columns + 1) + column + 1]!);
      }
    }
    let row = 0;
    let column = 0;
    while (row < rows || column < columns) {
      if (row < rows && column < columns && middleLeft[row] === middleRight[column]) {
        out.push({ kind: 'same', text: middleLeft[row]! });
        row++;
        column++;
      } else if (row < rows && (column === columns || table[(row + 1) * (columns + 1) + column]! >= table[row * (columns + 1) + column + 1]!)) {
        out.push({ kind: 'removed', text: middleLeft[row]! });
        row++;
      } else {
        out.push({ kind: 'added', text: middleRight[column]! });
        column++;
      }
    }
  }
  out.push(...left.slice(endLeft).map((text): DiffLine => ({ kind: 'same', text })));
  return out;
};

/** The changed lines with `context` kept lines around each change; runs of kept lines between are folded to `…`. */
export const hunks = (lines: readonly DiffLine[], context = 2): Array<DiffLine | { kind: 'fold'; count: number }> => {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((line, index) => {
    if (line.kind === 'same') return;
    for (let near = Math.max(0, index - context); near <= Math.min(lines.length - 1, index + context); near++) keep[near] = true;
  });
  const out: Array<DiffLine | { kind: 'fold'; count: number }> = [];
  let folded = 0;
  lines.forEach((line, index) => {
    if (keep[index]) {
      if (folded > 0) out.push({ kind: 'fold', count: folded });
      folded = 0;
      out.push(line);
    } else folded++;
  });
  if (folded > 0) out.push({ kind: 'fold', count: folded });
  return out;
};
